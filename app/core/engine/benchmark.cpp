#include "app/core/engine/benchmark.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "app/core/conv/variant_table.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/engine.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/atomic_file.h"
#include "app/core/util/error.h"
#include "app/core/util/input_file.h"
#include "app/core/util/json_file.h"

namespace convscope {
namespace {

using nlohmann::json;

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

std::string hostDescription() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      return line.substr(colon + 2) + ", " + std::to_string(std::thread::hardware_concurrency()) + " threads";
    }
  return std::to_string(std::thread::hardware_concurrency()) + " threads";
}

int countCorrect(const Tensor& probabilities, const ImageSet& images, int batch) {
  int correct = 0;
  const int64_t classes = probabilities.dim(1);
  for (int i = 0; i < batch; ++i) {
    const float* p = probabilities.data() + i * classes;
    correct += static_cast<int>(std::max_element(p, p + classes) - p) == images.label(i) ? 1 : 0;
  }
  return correct;
}

// What a stage wrote: the file's figure (a whole number), else the problem's output.
int64_t outputElementsFromJson(const json& layer) {
  if (!layer.contains("output_elements")) return convProblemFromJson(layer.at("problem")).outputElements();
  const json& value = layer.at("output_elements");
  if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<int64_t>() < 0) ||
      (value.is_number_unsigned() && value.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
    throw Error("\"output_elements\" is " + value.dump() + ", not a whole number of elements");
  return value.get<int64_t>();
}

json statsJson(const SampleStats& s) {
  return {{"median", s.median}, {"min", s.min}, {"max", s.max}};
}
SampleStats statsFromJson(const json& j) {
  return {j.at("median"), j.at("min"), j.at("max")};
}

json stagesJson(const std::vector<EndToEndStage>& stages) {
  json list = json::array();
  for (const EndToEndStage& stage : stages)
    list.push_back({{"name", stage.name}, {"kind", stage.kind}, {"time_s", statsJson(stage.time)}});
  return list;
}

// A stage's time is a duration: a negative or non-finite figure is a damaged file, not a stage.
std::vector<EndToEndStage> stagesFromJson(const json& list) {
  if (!list.is_array()) throw Error("\"end_to_end_stages\" is " + list.dump() + ", not a list of stages");
  std::vector<EndToEndStage> stages;
  for (const json& entry : list) {
    EndToEndStage stage{entry.at("name"), entry.at("kind"), statsFromJson(entry.at("time_s"))};
    for (const double seconds : {stage.time.median, stage.time.min, stage.time.max})
      if (!std::isfinite(seconds) || seconds < 0.0)
        throw Error("the end-to-end stage '" + stage.name + "' has a time of " + std::to_string(seconds) +
                    " s, not a duration");
    stages.push_back(std::move(stage));
  }
  return stages;
}

// "device_figures" of a benchmark file: what deviceFiguresFromJson takes, each field checked
// first (a file from another machine feeds the roofs and floors), so a malformed one is refused by
// name rather than read as 0. A field may be missing (its figure is then unknown).
DeviceFigures deviceFiguresFromFile(const json& j) {
  const auto field = [](const char* key) { return std::string("device_figures.") + key; };
  if (!j.is_object()) throw Error("\"device_figures\" is " + j.dump() + ", not an object");
  for (const char* key : {"name", "uuid", "driver", "runtime", "compute_capability"})
    if (j.contains(key) && !j.at(key).is_string())
      throw Error("\"" + field(key) + "\" is " + j.at(key).dump() + ", not a string");
  if (j.contains("compute_capability")) {
    const std::string capability = j.at("compute_capability");
    const size_t dot = capability.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == capability.size() || capability.size() > 5 ||
        capability.find_first_not_of("0123456789.") != std::string::npos ||
        capability.find('.', dot + 1) != std::string::npos)
      throw Error("\"" + field("compute_capability") + "\" is \"" + capability + "\", not MAJOR.MINOR");
  }
  // Generous bounds: an SM count, a clock in MHz and a bus width in bits are all well below this.
  for (const char* key : {"sm_count", "sm_clock_mhz", "memory_clock_mhz", "memory_bus_width_bits"})
    if (j.contains(key)) jsonWholeNumber(j.at(key), field(key), 0, 1'000'000);
  if (j.contains("copy_bytes_per_second")) {
    const json& copy = j.at("copy_bytes_per_second");
    if (!copy.is_null() && (!copy.is_number() || !std::isfinite(copy.get<double>()) || copy.get<double>() < 0.0))
      throw Error("\"" + field("copy_bytes_per_second") + "\" is " + copy.dump() +
                  ", not a number of bytes per second (or null: not measured)");
  }
  return deviceFiguresFromJson(j);
}

}  // namespace

json convProblemToJson(const ConvProblem& p) {
  return {{"batch", p.batch},
          {"in_channels", p.inChannels},
          {"in_height", p.inHeight},
          {"in_width", p.inWidth},
          {"out_channels", p.outChannels},
          {"out_height", p.outHeight()},
          {"out_width", p.outWidth()},
          {"kernel_height", p.kernelHeight},
          {"kernel_width", p.kernelWidth},
          {"stride", {p.strideHeight, p.strideWidth}},
          {"pads", {p.padTop, p.padLeft, p.padBottom, p.padRight}},
          {"group", p.group},
          {"dilation", {p.dilationHeight, p.dilationWidth}},
          {"flops", p.flops()}};
}

// Sizes up to 2^15 keep a dilated kernel's extent and every product of the problem in range.
constexpr int64_t kLargestSize = int64_t{1} << 15;
constexpr int64_t kLargestCount = int64_t{1} << 30;

ConvProblem convProblemFromJson(const json& j) {
  ConvProblem p;
  p.batch = jsonWholeNumber(j.at("batch"), "batch", 1, kLargestCount);
  p.inChannels = jsonWholeNumber(j.at("in_channels"), "in_channels", 1, kLargestSize);
  p.inHeight = jsonWholeNumber(j.at("in_height"), "in_height", 1, kLargestSize);
  p.inWidth = jsonWholeNumber(j.at("in_width"), "in_width", 1, kLargestSize);
  p.outChannels = jsonWholeNumber(j.at("out_channels"), "out_channels", 1, kLargestSize);
  p.kernelHeight = jsonWholeNumber(j.at("kernel_height"), "kernel_height", 1, kLargestSize);
  p.kernelWidth = jsonWholeNumber(j.at("kernel_width"), "kernel_width", 1, kLargestSize);
  p.strideHeight = jsonWholeNumber(j.at("stride").at(0), "stride", 1, kLargestSize);
  p.strideWidth = jsonWholeNumber(j.at("stride").at(1), "stride", 1, kLargestSize);
  p.padTop = jsonWholeNumber(j.at("pads").at(0), "pads", 0, kLargestSize);
  p.padLeft = jsonWholeNumber(j.at("pads").at(1), "pads", 0, kLargestSize);
  p.padBottom = jsonWholeNumber(j.at("pads").at(2), "pads", 0, kLargestSize);
  p.padRight = jsonWholeNumber(j.at("pads").at(3), "pads", 0, kLargestSize);
  // Absent in files written before grouped and dilated convolutions were read.
  p.group = j.contains("group") ? jsonWholeNumber(j.at("group"), "group", 1, kLargestSize) : 1;
  if (j.contains("dilation")) {
    p.dilationHeight = jsonWholeNumber(j.at("dilation").at(0), "dilation", 1, kLargestSize);
    p.dilationWidth = jsonWholeNumber(j.at("dilation").at(1), "dilation", 1, kLargestSize);
  }
  if (p.inHeight + p.padTop + p.padBottom < p.kernelExtentHeight() ||
      p.inWidth + p.padLeft + p.padRight < p.kernelExtentWidth())
    throw Error("a layer's problem has a kernel larger than its padded input (" + std::to_string(p.inHeight) + "x" +
                std::to_string(p.inWidth) + ")");
  // The group divides the channels in every problem ConvScope writes; any other would divide by
  // zero or index past the weights wherever the problem is described.
  if (p.group < 1 || p.inChannels % p.group != 0 || p.outChannels % p.group != 0 || p.dilationHeight < 1 ||
      p.dilationWidth < 1)
    throw Error("a layer's problem has group " + std::to_string(p.group) + " or dilation " +
                std::to_string(p.dilationHeight) + "x" + std::to_string(p.dilationWidth) +
                " that does not fit its channels");
  return p;
}

SampleStats SampleStats::of(std::vector<double> samples) {
  if (samples.empty()) return {};
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  const double median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  return {median, samples.front(), samples.back()};
}

BenchmarkReport runBenchmark(const BenchmarkOptions& options, const ImageSet& images,
                             const std::function<bool(const std::string&)>& progress) {
  if (options.repeats < 1) throw Error("the benchmark needs at least 1 repetition");
  if (options.variants.empty() || options.batches.empty()) throw Error("the benchmark needs variants and batch sizes");
  for (int batch : options.batches)
    if (batch < 1 || batch > images.count())
      throw Error("batch " + std::to_string(batch) + " is not between 1 and the " + std::to_string(images.count()) +
                  " images of " + images.source());
  if (!images.hasLabels()) throw Error(images.source() + ": the benchmark needs labelled images to report accuracy");
  const auto model = loadOnnxModel(options.model);
  // The model's own preprocessing (its card's), as classify uses it: a colour model's mean and
  // deviation change every value of the batch.
  const Preprocessing preprocessing = preprocessingFor(*model, readModelCard(options.model));

  BenchmarkReport report;
  report.model = model->name;
  report.date = utcNow();
  const GpuInfo& gpu = gpuInfo();
  report.device = gpu.usable ? gpu.name : "CPU only";
  report.driver = gpu.driverVersion;
  report.cudaRuntime = gpu.runtimeVersion;
  report.cudnn = gpuInfo().cudnnVersion;
  report.host = hostDescription();
  report.repeats = options.repeats;
  report.warmups = options.warmups;

  const auto say = [&](const std::string& message) { return !progress || progress(message); };
  for (const std::string& variant : options.variants) {
    Engine engine(model, variant);
    engine.setPreprocessing(preprocessing);
    // The end-to-end runs copy the set's bytes at full speed, as from any pinned host buffer.
    const auto pinned =
        options.endToEnd && images.hasBytes()
            ? engine.pinHostMemory(const_cast<uint8_t*>(images.bytes(0)),
                                   static_cast<size_t>(images.count()) * images.height() * images.width())
            : nullptr;
    for (int batch : options.batches) {
      if (!say(variant + ", batch " + std::to_string(batch) + ": warming up")) return report;
      engine.checkMemory(batch);  // before the batch itself is built
      const Tensor input = images.batch(0, batch, model->inputHeight(), model->inputWidth(), preprocessing);
      for (int w = 0; w < options.warmups; ++w) engine.infer(input);

      BenchmarkRun run;
      run.variant = variant;
      run.batch = batch;
      std::vector<std::vector<double>> layerSamples;
      std::vector<double> totals, uploads;
      InferenceResult last;
      for (int r = 0; r < options.repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        last = engine.infer(input);
        totals.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        uploads.push_back(last.uploadSeconds);
        layerSamples.resize(last.convTimes.size());
        for (size_t l = 0; l < last.convTimes.size(); ++l) layerSamples[l].push_back(last.convTimes[l].seconds);
        if (!say(variant + ", batch " + std::to_string(batch) + ": repetition " + std::to_string(r + 1) + " of " +
                 std::to_string(options.repeats)))
          return report;
      }
      for (size_t l = 0; l < last.convTimes.size(); ++l) {
        const ConvLayerTime& t = last.convTimes[l];
        LayerBenchmark layer;
        layer.node = t.node;
        layer.problem = t.problem;
        layer.ranVariant = t.variant;
        layer.fallbackReason = t.fallbackReason;
        layer.opTime = SampleStats::of(layerSamples[l]);
        const double bytes =
            t.stageBytes
                ? static_cast<double>(t.stageBytes)
                : 4.0 * static_cast<double>(t.problem.inputElements() + t.problem.weightElements() + t.outputElements);
        const double flops = static_cast<double>(t.stageFlops ? t.stageFlops : t.problem.flops());
        layer.gflops = flops / layer.opTime.median / 1e9;
        layer.gbytesPerSecond = bytes / layer.opTime.median / 1e9;
        layer.fusedNodes = t.fusedNodes;
        layer.outputElements = t.outputElements;
        run.layers.push_back(layer);
      }
      run.inference = SampleStats::of(totals);
      run.upload = SampleStats::of(uploads);
      run.correct = countCorrect(last.probabilities, images, batch);
      run.accuracy = static_cast<double>(run.correct) / batch;

      if (options.endToEnd && images.hasBytes()) {
        if (!say(variant + ", batch " + std::to_string(batch) + ": end to end from 8-bit images")) return report;
        const ByteImages bytes{images.bytes(0), batch, images.height(), images.width()};
        // One more warm-up than the plain runs: a small batch is recorded on its first run.
        for (int w = 0; w <= options.warmups; ++w) engine.inferBytes(bytes);
        std::vector<double> endToEnd;
        InferenceResult result;
        for (int r = 0; r < options.repeats; ++r) {
          const auto start = std::chrono::steady_clock::now();
          result = engine.inferBytes(bytes);
          endToEnd.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        }
        run.endToEnd = SampleStats::of(endToEnd);
        run.endToEndReplayed = result.replayed;
        run.endToEndCorrect = countCorrect(result.probabilities, images, batch);

        // Where that time goes: the same step, stage by stage, in a pass of its own (one warm-up:
        // the pinned buffer of the scores and the stages' first launches).
        if (!say(variant + ", batch " + std::to_string(batch) + ": end-to-end stages")) return report;
        engine.timeEndToEndStages(bytes);
        std::vector<std::vector<double>> stageSamples;
        std::vector<StageTime> stages;
        for (int r = 0; r < options.repeats; ++r) {
          stages = engine.timeEndToEndStages(bytes);
          stageSamples.resize(stages.size());
          for (size_t k = 0; k < stages.size(); ++k) stageSamples[k].push_back(stages[k].seconds);
        }
        for (size_t k = 0; k < stages.size(); ++k)
          run.endToEndStages.push_back({stages[k].name, stages[k].kind, SampleStats::of(stageSamples[k])});
      }
      report.runs.push_back(std::move(run));
      // A GPU variant ran: the file carries that GPU's figures (its copy measured once per machine).
      if (engine.device() && gpu.usable && !report.deviceFigures) report.deviceFigures = localDeviceFigures();
    }
  }
  return report;
}

// "FP32", "TF32", "3xTF32": the variant's row says; a file from a newer ConvScope may name one
// this build does not know.
namespace {
std::string arithmeticOf(const std::string& variant) {
  for (const ConvVariant& v : convVariants())
    if (v.id == variant) return v.arithmetic;
  for (const ConvVariant* v : userConvVariants())  // a student's kernel
    if (v->id == variant) return v->arithmetic;
  return "unknown";
}
}  // namespace

void writeBenchmarkJson(const BenchmarkReport& report, const std::filesystem::path& path) {
  json runs = json::array();
  for (const BenchmarkRun& run : report.runs) {
    json layers = json::array();
    for (const LayerBenchmark& l : run.layers)
      layers.push_back({{"node", l.node},
                        {"problem", convProblemToJson(l.problem)},
                        {"ran_variant", l.ranVariant},
                        {"fallback_reason", l.fallbackReason},
                        {"op_time_s", statsJson(l.opTime)},
                        {"gflops", l.gflops},
                        {"gbytes_per_s", l.gbytesPerSecond},
                        {"fused_nodes", l.fusedNodes},
                        {"output_elements", l.outputElements}});
    runs.push_back({{"variant", run.variant},
                    {"arithmetic", arithmeticOf(run.variant)},
                    {"batch", run.batch},
                    {"layers", layers},
                    {"inference_s", statsJson(run.inference)},
                    {"upload_s", statsJson(run.upload)},
                    {"end_to_end_s", statsJson(run.endToEnd)},
                    {"end_to_end_replayed", run.endToEndReplayed},
                    {"end_to_end_correct", run.endToEndCorrect},
                    {"end_to_end_stages", stagesJson(run.endToEndStages)},
                    {"accuracy", run.accuracy},
                    {"correct", run.correct}});
  }
  json document = {{"schema", "convscope-benchmark/1"},
                   {"model", report.model},
                   {"date", report.date},
                   {"device", report.device},
                   {"driver", report.driver},
                   {"cuda_runtime", report.cudaRuntime},
                   {"cudnn", report.cudnn},
                   {"host", report.host},
                   {"repeats", report.repeats},
                   {"warmups", report.warmups},
                   {"runs", runs}};
  if (report.deviceFigures) document["device_figures"] = deviceFiguresToJson(*report.deviceFigures);
  std::ostringstream out;
  out << document.dump(2) << "\n";
  writeFileAtomically(path, out.str());
}

BenchmarkReport readBenchmarkJson(const std::filesystem::path& path) {
  // A sweep of every variant at every batch size is a few hundred kB.
  InputFile file(path, "a benchmark file", uint64_t{256} << 20);
  const std::string text = file.readAll();
  try {
    const json j = parseJsonText(text, path.string());
    if (!j.is_object() || j.value("schema", "") != "convscope-benchmark/1")
      throw Error(path.string() + ": not a ConvScope benchmark file (schema convscope-benchmark/1)");
    BenchmarkReport report;
    report.model = j.at("model");
    report.date = j.at("date");
    report.device = j.at("device");
    report.driver = j.value("driver", "");
    report.cudaRuntime = j.value("cuda_runtime", "");
    report.cudnn = j.value("cudnn", "");
    report.host = j.value("host", "");
    report.repeats = jsonWholeNumber(j.at("repeats"), "repeats", 0, kLargestCount);
    report.warmups = j.contains("warmups") ? jsonWholeNumber(j.at("warmups"), "warmups", 0, kLargestCount) : 0;
    if (j.contains("device_figures")) report.deviceFigures = deviceFiguresFromFile(j.at("device_figures"));  // newer
    for (const json& r : j.at("runs")) {
      BenchmarkRun run;
      run.variant = r.at("variant");
      run.batch = jsonWholeNumber(r.at("batch"), "batch", 1, kLargestCount);
      for (const json& l : r.at("layers"))
        run.layers.push_back({.node = l.at("node"),
                              .problem = convProblemFromJson(l.at("problem")),
                              .ranVariant = l.at("ran_variant"),
                              .fallbackReason = l.value("fallback_reason", ""),
                              .opTime = statsFromJson(l.at("op_time_s")),
                              .gflops = l.at("gflops"),
                              .gbytesPerSecond = l.at("gbytes_per_s"),
                              .fusedNodes = l.value("fused_nodes", std::vector<std::string>{}),
                              .outputElements = outputElementsFromJson(l)});
      run.inference = statsFromJson(r.at("inference_s"));
      run.upload = statsFromJson(r.at("upload_s"));
      if (r.contains("end_to_end_s")) run.endToEnd = statsFromJson(r.at("end_to_end_s"));  // newer files
      run.endToEndReplayed = r.value("end_to_end_replayed", false);
      run.endToEndCorrect = r.contains("end_to_end_correct")
                                ? jsonWholeNumber(r.at("end_to_end_correct"), "end_to_end_correct", 0, kLargestCount)
                                : 0;
      if (r.contains("end_to_end_stages")) run.endToEndStages = stagesFromJson(r.at("end_to_end_stages"));  // newer
      run.accuracy = r.at("accuracy");
      run.correct = jsonWholeNumber(r.at("correct"), "correct", 0, kLargestCount);
      report.runs.push_back(std::move(run));
    }
    return report;
  } catch (const json::exception& e) {
    throw Error(path.string() + ": malformed benchmark file: " + describeJsonFieldError(e));
  } catch (const Error& e) {
    // The checks of the fields above speak of the field; the file is named here, once.
    const std::string message = e.what();
    if (message.rfind(path.string(), 0) == 0) throw;
    throw Error(path.string() + ": malformed benchmark file: " + message);
  }
}

void writeBenchmarkCsv(const BenchmarkReport& report, const std::filesystem::path& path) {
  std::ostringstream out;
  out << "device,model,variant,batch,layer,node,ran_variant,op_time_median_s,op_time_min_s,op_time_max_s,gflops,"
         "gbytes_per_s,inference_median_s,upload_median_s,end_to_end_median_s,accuracy\n";
  for (const BenchmarkRun& run : report.runs)
    for (size_t l = 0; l < run.layers.size(); ++l) {
      const LayerBenchmark& layer = run.layers[l];
      out << '"' << report.device << "\"," << report.model << ',' << run.variant << ',' << run.batch << ',' << l + 1
          << ',' << layer.node << ',' << layer.ranVariant << ',' << layer.opTime.median << ',' << layer.opTime.min
          << ',' << layer.opTime.max << ',' << layer.gflops << ',' << layer.gbytesPerSecond << ','
          << run.inference.median << ',' << run.upload.median << ',' << run.endToEnd.median << ',' << run.accuracy
          << '\n';
    }
  writeFileAtomically(path, out.str());
}

int mergeRuns(BenchmarkReport& into, const BenchmarkReport& added, RunMerge rule) {
  if (rule == RunMerge::kReplaceTheVariants) {
    std::erase_if(into.runs, [&](const BenchmarkRun& run) {
      return std::any_of(added.runs.begin(), added.runs.end(),
                         [&](const BenchmarkRun& newer) { return newer.variant == run.variant; });
    });
    into.runs.insert(into.runs.end(), added.runs.begin(), added.runs.end());
    return static_cast<int>(added.runs.size());
  }
  int joined = 0;
  for (const BenchmarkRun& run : added.runs) {
    const auto same = std::find_if(into.runs.begin(), into.runs.end(), [&](const BenchmarkRun& shown) {
      return shown.variant == run.variant && shown.batch == run.batch;
    });
    if (same == into.runs.end()) {
      into.runs.push_back(run);
      ++joined;
    } else if (rule == RunMerge::kNewerPerBatch) {
      *same = run;
      ++joined;
    }
  }
  return joined;
}

std::vector<KernelOpTime> opTimeSumsPerBatch(const BenchmarkReport& report) {
  std::vector<KernelOpTime> sums;
  for (const BenchmarkRun& run : report.runs) {
    if (std::any_of(sums.begin(), sums.end(), [&](const KernelOpTime& t) { return t.batch == run.batch; })) continue;
    double sum = 0.0;
    for (const LayerBenchmark& layer : run.layers) sum += layer.opTime.median;
    sums.push_back({run.batch, sum});
  }
  return sums;
}

}  // namespace convscope
