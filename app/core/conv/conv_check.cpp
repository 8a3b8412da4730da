#include "app/core/conv/conv_check.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

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
    out << "passed: " << checked.size() << " random shapes (seed " << seed << ") match the double-precision reference";
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

ConvCheckResult checkConvAgainstReference(ConvBackend& conv, const std::vector<ConvProblem>& shapes, uint64_t seed,
                                          const std::function<std::string(const ConvProblem&)>& unsupported,
                                          const std::function<bool()>& keepGoing) {
  ConvCheckResult result;
  result.seed = seed;
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  for (const ConvProblem& p : shapes) result.outcomes.push_back({p, ConvShapeOutcome::Kind::NotRun, {}});
  for (size_t s = 0; s < shapes.size(); ++s) {
    const ConvProblem& p = shapes[s];
    if (keepGoing && !keepGoing()) break;
    if (unsupported)
      if (const std::string reason = unsupported(p); !reason.empty()) {
        result.declined.push_back(p.describe() + ": " + reason);
        result.outcomes[s].kind = ConvShapeOutcome::Kind::Declined;
        result.outcomes[s].reason = reason;
        continue;
      }
    const std::vector<float> x = randomValues(rng, p.inputElements());
    const std::vector<float> k = randomValues(rng, p.weightElements());
    std::vector<float> y(static_cast<size_t>(p.outputElements()), unwrittenPoison());
    conv.forward(p, x.data(), k.data(), y.data());
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

}  // namespace convscope
