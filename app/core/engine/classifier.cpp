#include "app/core/engine/classifier.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

#include "app/core/util/error.h"

namespace convscope {

std::vector<int> topClasses(const std::vector<float>& probabilities, int k) {
  std::vector<int> order(probabilities.size());
  std::iota(order.begin(), order.end(), 0);
  const auto before = [&](int a, int b) {
    const float pa = probabilities[static_cast<size_t>(a)], pb = probabilities[static_cast<size_t>(b)];
    if (std::isnan(pa) != std::isnan(pb)) return std::isnan(pb);
    if (!std::isnan(pa) && pa != pb) return pa > pb;
    return a < b;
  };
  const size_t kept = std::min(order.size(), static_cast<size_t>(std::max(k, 0)));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(kept), order.end(), before);
  order.resize(kept);
  return order;
}

ClassificationRun classify(Engine& engine, const ImageSet& images, int first, int count, int chunk,
                           const std::function<bool(int, int)>& progress) {
  if (count < 1) throw Error("nothing to classify: the image count must be at least 1");
  if (first < 0 || first + count > images.count())
    throw Error(images.source() + " holds " + std::to_string(images.count()) + " images; " + std::to_string(count) +
                " from index " + std::to_string(first) + " requested");
  const Model& model = engine.model();
  const int height = model.inputHeight();
  const int width = model.inputWidth();
  const auto start = std::chrono::steady_clock::now();

  if (images.channels() != model.inputChannels())
    throw Error(images.source() + " holds " + (images.channels() == 1 ? "gray" : "colour") + " pictures, but " +
                model.sourcePath + " takes " + std::to_string(model.inputChannels()) + "-channel ones");
  // The chunk shrinks to what fits in memory; when not even one image does, the refusal names
  // the layer and the figures.
  const int fits = engine.largestBatchThatFits();
  if (fits < 1) engine.checkMemory(1);
  chunk = std::max(1, std::min(chunk, fits));

  ClassificationRun run;
  run.images.reserve(static_cast<size_t>(count));
  for (int done = 0; done < count;) {
    const int n = std::min(chunk, count - done);
    const InferenceResult result = engine.infer(images.batch(first + done, n, height, width, engine.preprocessing()));
    const int64_t classes = result.probabilities.dim(1);
    for (int i = 0; i < n; ++i) {
      ImageClassification c;
      c.index = first + done + i;
      c.label = images.label(c.index);
      const float* p = result.probabilities.data() + i * classes;
      c.probabilities.assign(p, p + classes);
      c.predicted = static_cast<int>(std::max_element(p, p + classes) - p);
      if (c.label != ImageSet::kNoLabel) {
        ++run.labelled;
        run.correct += c.label == c.predicted ? 1 : 0;
      }
      run.images.push_back(std::move(c));
    }
    if (run.convTimes.empty()) {
      run.convTimes = result.convTimes;
    } else {
      for (size_t l = 0; l < run.convTimes.size() && l < result.convTimes.size(); ++l)
        run.convTimes[l].seconds += result.convTimes[l].seconds;
    }
    for (ConvLayerTime& t : run.convTimes) t.problem.batch = done + n;  // the batch the summed time covers
    done += n;
    if (progress && !progress(done, count) && done < count) {
      run.cancelled = true;
      break;
    }
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

std::vector<ConvLayerTime> convLayersAtBatch(Engine& engine, const ImageSet& images, int batch) {
  const int count = std::min(batch, images.count());
  return classify(engine, images, 0, count, count).convTimes;
}

}  // namespace convscope
