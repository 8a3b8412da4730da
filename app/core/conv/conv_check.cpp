#include "app/core/conv/conv_check.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

#include "app/core/util/error.h"

namespace convscope {
namespace {

// The reference, element by element in double: each output and the sum of its products'
// magnitudes (what FP32 rounding scales with).
void referenceElement(const ConvProblem& p, const std::vector<float>& x, const std::vector<float>& k, int n, int m,
                      int h, int w, double& sum, double& magnitude) {
  sum = 0.0;
  magnitude = 0.0;
  for (int c = 0; c < p.inChannels; ++c)
    for (int i = 0; i < p.kernelHeight; ++i)
      for (int j = 0; j < p.kernelWidth; ++j) {
        const int y = h * p.strideHeight - p.padTop + i;
        const int xx = w * p.strideWidth - p.padLeft + j;
        if (y < 0 || y >= p.inHeight || xx < 0 || xx >= p.inWidth) continue;
        const double product = double{x[((size_t(n) * p.inChannels + c) * p.inHeight + y) * p.inWidth + xx]} *
                               double{k[((size_t(m) * p.inChannels + c) * p.kernelHeight + i) * p.kernelWidth + j]};
        sum += product;
        magnitude += std::fabs(product);
      }
}

std::vector<float> randomValues(std::mt19937_64& rng, int64_t count) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::uniform_int_distribution<int> pick(0, 49);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = pick(rng) == 0 ? (pick(rng) % 2 ? 8.0f : -8.0f) : uniform(rng);
  return values;
}

// The inputs and weights of the shapes that run, in their order, from the check's seed: the
// kernel's process and the checker draw the same values.
class CheckInputs {
 public:
  explicit CheckInputs(uint64_t seed) : rng_(seed ^ 0x9e3779b97f4a7c15ull) {}
  void next(const ConvProblem& p, std::vector<float>& x, std::vector<float>& k) {
    x = randomValues(rng_, p.inputElements());
    k = randomValues(rng_, p.weightElements());
  }

 private:
  std::mt19937_64 rng_;
};

}  // namespace

std::string ConvMismatch::text() const {
  std::ostringstream out;
  out.precision(9);
  out << "wrong output at [n=" << n << "][m=" << m << "][h=" << h << "][w=" << w << "] of " << problem.describe()
      << ": expected " << expected << ", got " << got;
  if (isUnwrittenPoison(got))
    out << " (NaN: never written, the poison the check put there is still there)";
  else if (std::isnan(got))
    out << " (NaN: computed from garbage, or 0/0)";
  out << " (allowed difference " << allowed << ")";
  return out.str();
}

const char* ConvShapeOutcome::name() const {
  switch (kind) {
    case Kind::Passed:
      return "passed";
    case Kind::Failed:
      return "failed";
    case Kind::Declined:
      return "declined";
    case Kind::NotRun:
      return "not run";
  }
  return "?";
}

std::string ConvCheckResult::summary() const {
  std::ostringstream out;
  if (firstWrong)
    out << "FAILED after " << checked.size() << " correct shape(s): " << firstWrong->text();
  else if (checked.empty())
    out << "not checked: the kernel declined every shape";
  else
    out << "passed: " << checked.size() << " shapes (seed " << seed << ") match the double-precision reference";
  if (!declined.empty()) out << "; declined " << declined.size() << " shape(s): " << declined.front();
  return out.str();
}

std::vector<ConvProblem> randomCheckShapes(uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  const auto between = [&](int least, int most) { return std::uniform_int_distribution<int>(least, most)(rng); };
  std::vector<ConvProblem> shapes;
  ConvProblem course;  // the course's first layer, on a 19x23 image: no tile divides it
  course.batch = 2;
  course.inHeight = 19;
  course.inWidth = 23;
  course.outChannels = 3;
  course.kernelHeight = course.kernelWidth = 5;
  shapes.push_back(course);
  while (static_cast<int>(shapes.size()) < count) {
    ConvProblem p;
    p.batch = between(1, 3);
    p.inChannels = between(1, 5);
    p.outChannels = between(1, 6);
    p.kernelHeight = between(1, 5);
    p.kernelWidth = between(0, 3) == 0 ? between(1, 5) : p.kernelHeight;
    // Odd sizes between 7 and 41 that 2, 4, 8, 16 and 32 never divide.
    p.inHeight = 2 * between(3, 20) + 1;
    p.inWidth = 2 * between(3, 20) + 1;
    const int pad = between(0, 2);
    p.padTop = p.padBottom = std::min(pad, p.kernelHeight - 1);
    p.padLeft = p.padRight = std::min(pad, p.kernelWidth - 1);
    p.strideHeight = p.strideWidth = between(0, 3) == 0 ? 2 : 1;
    if (p.outHeight() < 1 || p.outWidth() < 1) continue;
    shapes.push_back(p);
  }
  return shapes;
}

std::vector<ConvProblem> checkShapes(uint64_t seed, int count, const std::vector<ConvProblem>& modelLayers) {
  std::vector<ConvProblem> shapes = randomCheckShapes(seed, count);
  std::vector<ConvProblem> own;
  for (ConvProblem layer : modelLayers) {
    layer.batch = 2;
    // The double-precision reference's cost: outputs x window. A layer of an ImageNet network is
    // checked on a smaller image with everything else (channels, kernel, stride, padding) its own.
    constexpr int64_t kMostMultiplyAdds = 40'000'000;
    const auto cost = [](const ConvProblem& p) {
      return p.outputElements() * p.inChannelsPerGroup() * p.kernelHeight * p.kernelWidth;
    };
    while (cost(layer) > kMostMultiplyAdds && layer.inHeight > layer.kernelHeight + 8 &&
           layer.inWidth > layer.kernelWidth + 8) {
      layer.inHeight = std::max(layer.kernelHeight + 8, layer.inHeight / 2) | 1;  // odd: no tile divides it
      layer.inWidth = std::max(layer.kernelWidth + 8, layer.inWidth / 2) | 1;
    }
    if (layer.outHeight() < 1 || layer.outWidth() < 1) continue;
    const auto same = [&](const ConvProblem& p) { return p.describe() == layer.describe(); };
    if (std::none_of(own.begin(), own.end(), same)) own.push_back(layer);
  }
  shapes.insert(shapes.begin() + std::min<size_t>(1, shapes.size()), own.begin(), own.end());
  return shapes;
}

std::vector<std::string> runConvOnCheckShapes(
    ConvBackend& conv, const std::vector<ConvProblem>& shapes, uint64_t seed,
    const std::function<std::string(const ConvProblem&)>& unsupported,
    const std::function<void(size_t index, const std::vector<float>& output)>& ranShape,
    const std::function<bool()>& keepGoing) {
  std::vector<std::string> declined(shapes.size());
  CheckInputs inputs(seed);
  for (size_t s = 0; s < shapes.size(); ++s) {
    const ConvProblem& p = shapes[s];
    if (keepGoing && !keepGoing()) break;
    if (unsupported) declined[s] = unsupported(p);
    if (!declined[s].empty()) continue;
    std::vector<float> x, k;
    inputs.next(p, x, k);
    std::vector<float> y(static_cast<size_t>(p.outputElements()), unwrittenPoison());
    conv.forward(p, x.data(), k.data(), y.data());
    ranShape(s, y);
  }
  return declined;
}

ConvCheckResult compareCheckOutputs(const std::vector<ConvProblem>& shapes, uint64_t seed,
                                    const std::vector<std::string>& declined,
                                    const std::function<std::vector<float>(size_t index)>& outputOf) {
  ConvCheckResult result;
  result.seed = seed;
  CheckInputs inputs(seed);
  for (const ConvProblem& p : shapes) result.outcomes.push_back({p, ConvShapeOutcome::Kind::NotRun, {}});
  for (size_t s = 0; s < shapes.size(); ++s) {
    const ConvProblem& p = shapes[s];
    if (s < declined.size() && !declined[s].empty()) {
      result.declined.push_back(p.describe() + ": " + declined[s]);
      result.outcomes[s].kind = ConvShapeOutcome::Kind::Declined;
      result.outcomes[s].reason = declined[s];
      continue;
    }
    std::vector<float> x, k;
    inputs.next(p, x, k);
    const std::vector<float> y = outputOf(s);
    if (y.size() != static_cast<size_t>(p.outputElements()))
      throw Error("the output of " + p.describe() + " holds " + std::to_string(y.size()) + " values, not " +
                  std::to_string(p.outputElements()));
    const int height = p.outHeight(), width = p.outWidth();
    const size_t mapSize = static_cast<size_t>(height) * width;
    std::vector<double> expected(mapSize), allowed(mapSize);
    int64_t shapeBad = 0;
    std::optional<ConvFailureMap> failing;
    for (int n = 0; n < p.batch; ++n)
      for (int m = 0; m < p.outChannels; ++m) {
        const size_t first = (static_cast<size_t>(n) * p.outChannels + m) * mapSize;
        bool mapBad = false;
        for (int h = 0; h < height; ++h)
          for (int w = 0; w < width; ++w) {
            const size_t i = static_cast<size_t>(h) * width + w;
            double magnitude = 0.0;
            referenceElement(p, x, k, n, m, h, w, expected[i], magnitude);
            allowed[i] = kUserKernelRelativeTolerance * magnitude + 1e-30;
            // Written so that NaN (and infinity) fails: the comparison is false for them.
            if (!(std::fabs(double{y[first + i]} - expected[i]) <= allowed[i])) {
              ++shapeBad;
              if (!result.firstWrong)
                result.firstWrong = ConvMismatch{p, n, m, h, w, expected[i], y[first + i], allowed[i]};
              mapBad = true;
            }
          }
        // The map of the first wrong element is the one shown.
        if (mapBad && !failing)
          failing = classifyOutputMap(p, n, m, height, width, expected, allowed,
                                      std::vector<float>(y.begin() + first, y.begin() + first + mapSize));
      }
    if (failing) {
      failing->shapeBad = shapeBad;
      failing->shapeTotal = p.outputElements();
      result.failure = std::move(failing);
      result.outcomes[s].kind = ConvShapeOutcome::Kind::Failed;
      return result;
    }
    result.checked.push_back(p);
    result.outcomes[s].kind = ConvShapeOutcome::Kind::Passed;
  }
  return result;
}

ConvCheckResult checkConvAgainstReference(ConvBackend& conv, const std::vector<ConvProblem>& shapes, uint64_t seed,
                                          const std::function<std::string(const ConvProblem&)>& unsupported,
                                          const std::function<bool()>& keepGoing) {
  // Both halves in this process (the course's own variants): the outputs kept in memory.
  std::vector<std::vector<float>> outputs(shapes.size());
  std::vector<bool> ran(shapes.size(), false);
  const std::vector<std::string> declined = runConvOnCheckShapes(
      conv, shapes, seed, unsupported,
      [&](size_t index, const std::vector<float>& output) {
        outputs[index] = output;
        ran[index] = true;
      },
      keepGoing);
  // A cancelled run compares the shapes it reached; the rest stay "not run".
  size_t reached = 0;
  while (reached < shapes.size() && (ran[reached] || !declined[reached].empty())) ++reached;
  ConvCheckResult result = compareCheckOutputs(std::vector<ConvProblem>(shapes.begin(), shapes.begin() + reached), seed,
                                               declined, [&](size_t index) { return outputs[index]; });
  for (size_t s = reached; s < shapes.size(); ++s)
    result.outcomes.push_back({shapes[s], ConvShapeOutcome::Kind::NotRun, {}});
  return result;
}

int64_t checkOutputFileBytes(const ConvProblem& problem) {
  return problem.outputElements() * static_cast<int64_t>(sizeof(float));
}

std::filesystem::path checkOutputFile(const std::filesystem::path& folder, size_t index) {
  return folder / ("shape-" + std::to_string(index) + ".f32");
}

void writeCheckOutput(const std::filesystem::path& file, const ConvProblem& problem, const std::vector<float>& output) {
  if (static_cast<int64_t>(output.size() * sizeof(float)) != checkOutputFileBytes(problem))
    throw Error(file.string() + ": " + std::to_string(output.size()) + " values to write, but " + problem.describe() +
                " has " + std::to_string(problem.outputElements()) + " outputs");
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(output.data()), static_cast<std::streamsize>(output.size() * sizeof(float)));
  out.close();
  if (!out) throw Error(file.string() + ": cannot write the kernel's output there");
}

std::vector<float> readCheckOutput(const std::filesystem::path& file, const ConvProblem& problem) {
  const int64_t expectedBytes = checkOutputFileBytes(problem);
  std::error_code error;
  const auto bytes = std::filesystem::file_size(file, error);
  if (error)
    throw Error(file.string() + ": the kernel's output of " + problem.describe() +
                " is missing (its process ended before writing it?)");
  if (static_cast<int64_t>(bytes) != expectedBytes)
    throw Error(file.string() + ": holds " + std::to_string(bytes) + " bytes, but the output of " + problem.describe() +
                " is " + std::to_string(problem.outputElements()) + " floats = " + std::to_string(expectedBytes) +
                " bytes (a truncated or foreign file): not compared");
  std::vector<float> values(static_cast<size_t>(problem.outputElements()));
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(expectedBytes));
  if (!in || in.gcount() != expectedBytes) throw Error(file.string() + ": cannot read the kernel's output");
  return values;
}

}  // namespace convscope
