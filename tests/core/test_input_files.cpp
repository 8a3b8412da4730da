// Every file the core opens goes through one gate: a folder, a device (/dev/zero), a FIFO, a
// symbolic-link loop or an oversized file named where a model, an image, an IDX file, a model card
// or a benchmark file is expected is refused at once with the file's name and what it is --
// never "file not found", never a hang, never a read of gigabytes. Headers are checked against
// documented limits before anything the header promises is allocated or inflated.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>

#include "app/core/data/idx_file.h"
#include "app/core/data/image_file.h"
#include "app/core/data/image_set.h"
#include "app/core/engine/benchmark.h"
#include "app/core/engine/kernel_profile_json.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/atomic_file.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

namespace fs = std::filesystem;
using testing::expectError;
using testing::TempDir;

// Peak resident memory of this process so far, in bytes (Linux reports kilobytes).
uint64_t peakRss() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}
constexpr uint64_t kOneGB = 1000000000ULL;

std::vector<uint8_t> idxHeader(std::vector<uint32_t> dims) {
  std::vector<uint8_t> bytes = {0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(d >> shift));
  return bytes;
}

// gzip of `head` followed by `zeros` zero bytes, compressed as a stream (the bomb never exists
// uncompressed in memory).
std::vector<uint8_t> gzipStream(const std::vector<uint8_t>& head, uint64_t zeros, int level = 1) {
  z_stream s{};
  deflateInit2(&s, level, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::vector<uint8_t> out;
  std::vector<uint8_t> buffer(1 << 20);
  const std::vector<uint8_t> block(1 << 20, 0);
  const auto pump = [&](const uint8_t* data, size_t size, int flush) {
    s.next_in = const_cast<Bytef*>(data);
    s.avail_in = static_cast<uInt>(size);
    do {
      s.next_out = buffer.data();
      s.avail_out = static_cast<uInt>(buffer.size());
      deflate(&s, flush);
      out.insert(out.end(), buffer.data(), buffer.data() + (buffer.size() - s.avail_out));
    } while (s.avail_out == 0);
  };
  pump(head.data(), head.size(), Z_NO_FLUSH);
  for (uint64_t left = zeros; left > 0;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(left, block.size()));
    pump(block.data(), n, Z_NO_FLUSH);
    left -= n;
  }
  pump(nullptr, 0, Z_FINISH);
  deflateEnd(&s);
  return out;
}

// The kinds of path that are not a readable regular file, each with what the message must say.
struct OddPath {
  std::string label;
  fs::path path;
  std::string says;
};

std::vector<OddPath> oddPaths(const TempDir& dir, const std::string& name) {
  std::vector<OddPath> paths;
  fs::create_directories(dir.path() / "folder" / name);
  paths.push_back({"folder", dir.path() / "folder" / name, "is a directory"});
  fs::create_directories(dir.path() / "fifo");
  const fs::path fifo = dir.path() / "fifo" / name;
  EXPECT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  paths.push_back({"fifo", fifo, "is a named pipe"});
  fs::create_directories(dir.path() / "loop");
  const fs::path loop = dir.path() / "loop" / name;
  fs::create_symlink(dir.path() / "loop" / "other", loop);
  fs::create_symlink(loop, dir.path() / "loop" / "other");
  paths.push_back({"symlink loop", loop, "symbolic link loop"});
  fs::create_directories(dir.path() / "device");
  const fs::path device = dir.path() / "device" / name;
  fs::create_symlink("/dev/zero", device);
  paths.push_back({"/dev/zero", device, "is a character device"});
  paths.push_back({"missing", dir.path() / "missing" / name, "file not found"});
  return paths;
}

void expectEveryOddPathRefused(const std::string& name, const std::function<void(const fs::path&)>& read) {
  TempDir dir;
  for (const OddPath& odd : oddPaths(dir, name)) {
    SCOPED_TRACE(odd.label);
    expectError([&] { read(odd.path); }, {odd.path.string() + ": ", odd.says});
  }
}

TEST(InputFiles, ModelPathThatIsNoRegularFileIsRefusedSayingWhatItIs) {
  expectEveryOddPathRefused("x.onnx", [](const fs::path& p) { loadOnnxModel(p); });
}

TEST(InputFiles, IdxPathThatIsNoRegularFileIsRefusedSayingWhatItIs) {
  expectEveryOddPathRefused("t10k-images-idx3-ubyte", [](const fs::path& p) { readIdxFile(p); });
}

TEST(InputFiles, ImagePathThatIsNoRegularFileIsRefusedSayingWhatItIs) {
  if (!imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV";
  expectEveryOddPathRefused("x.png", [](const fs::path& p) { loadImageFile(p, false); });
}

TEST(InputFiles, BenchmarkJsonThatIsNoRegularFileIsRefusedSayingWhatItIs) {
  expectEveryOddPathRefused("bench.json", [](const fs::path& p) { readBenchmarkJson(p); });
}

TEST(InputFiles, ModelCardThatIsNoRegularFileIsRefusedButAMissingCardIsNone) {
  TempDir dir;
  for (const OddPath& odd : oddPaths(dir, "model.json")) {
    SCOPED_TRACE(odd.label);
    const fs::path model = odd.path.parent_path() / "model.onnx";
    if (odd.label == "missing") {
      EXPECT_FALSE(readModelCard(model).has_value());
      continue;
    }
    expectError([&] { readModelCard(model); }, {odd.path.string() + ": ", odd.says});
  }
}

TEST(InputFiles, ProfileJsonThatIsNoRegularFileIsRefusedSayingWhatItIs) {
  expectEveryOddPathRefused("profile.json", [](const fs::path& p) { readKernelProfileJson(p); });
}

// ---------------------------------------------------------------------------------------------
// JSON files say what is wrong in the user's words, never the library's
// ("[json.exception.parse_error.101] parse error at line 1, column 1" for an empty file).

// Every reader of a JSON file, as a function of the file's path.
const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>>& jsonReaders() {
  static const std::vector<std::pair<std::string, std::function<void(const fs::path&)>>> readers = {
      {"bench.json", [](const fs::path& p) { readBenchmarkJson(p); }},
      {"profile.json", [](const fs::path& p) { readKernelProfileJson(p); }},
      // A model card is read beside its model: model.onnx -> model.json.
      {"model.json", [](const fs::path& p) { readModelCard(p.parent_path() / "model.onnx"); }},
  };
  return readers;
}

std::string errorOf(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonFiles, EmptyOrBlankFileIsSaidToBeEmptyByEveryReader) {
  TempDir dir;
  for (const auto& [name, read] : jsonReaders())
    for (const std::string content : {"", " \n\t\n"}) {
      const std::vector<uint8_t> bytes(content.begin(), content.end());
      const fs::path file = dir.write(name, bytes);
      EXPECT_EQ(errorOf([&, &read = read] { read(file); }), file.string() + " is empty") << name;
    }
}

TEST(JsonFiles, TextThatIsNotJsonIsRefusedWithItsLineAndColumn) {
  TempDir dir;
  // The fault, the letter x, is the 12th character of the second line.
  const std::string text = "{\n  \"model\": x\n}\n";
  const size_t lineStart = text.find('\n') + 1;
  const std::string where =
      "line 2, column " + std::to_string(text.find('x') - lineStart + 1) + ": syntax error while parsing value";
  for (const auto& [name, read] : jsonReaders()) {
    const fs::path file = dir.write(name, std::vector<uint8_t>(text.begin(), text.end()));
    const std::string error = errorOf([&, &read = read] { read(file); });
    EXPECT_EQ(error.rfind(file.string() + " is not JSON: " + where, 0), 0u) << error;
    EXPECT_EQ(error.find("json.exception"), std::string::npos) << error;
  }
}

TEST(JsonFiles, MissingOrMistypedFieldIsNamedWithoutTheLibrarysWords) {
  TempDir dir;
  const struct {
    std::string name, content, says;
  } cases[] = {
      {"bench.json", R"({"schema": "convscope-benchmark/1", "date": "d", "device": "x", "repeats": 1, "runs": []})",
       ": malformed benchmark file: field \"model\" missing"},
      {"bench.json",
       R"({"schema": "convscope-benchmark/1", "model": 5, "date": "d", "device": "x", "repeats": 1, "runs": []})",
       ": malformed benchmark file: a field of the wrong type (type must be string, but is number)"},
      {"bench.json",
       R"({"schema": "convscope-benchmark/1", "model": "m", "date": "d", "device": "x", "repeats": "ten", "runs": []})",
       ": malformed benchmark file: \"repeats\" is \"ten\", not a whole number from 0 to 1073741824"},
      {"bench.json", R"([1, 2, 3])", ": not a ConvScope benchmark file (schema convscope-benchmark/1)"},
      {"profile.json", R"({"schema": "convscope-profile/1", "model": "m", "device": "d", "batch": 1, "rows": []})",
       ": not a readable profile: field \"variant\" missing"},
      {"profile.json",
       R"({"schema": "convscope-profile/1", "variant": "v", "model": "m", "device": "d", "batch": 1e300, "rows": []})",
       ": \"batch\" is 1e+300, not a whole number from 1 to 1073741824"},
      {"model.json", R"({"test_accuracy": "high"})",
       ": malformed model card: a field of the wrong type (type must be number, but is string)"},
      {"model.json", R"({"preprocessing": [1, 2]})",
       ": malformed \"preprocessing\": it is not an object of fields (\"resize\", \"mean\", ...)"},
      {"model.json", R"({"preprocessing": {"resize": "crop"}})",
       ": malformed \"preprocessing\": \"resize\" is \"crop\"; it is one of \"fit\", \"centre-crop\" or \"stretch\""},
      {"model.json", R"({"preprocessing": {"std": [0.2, 0, 0.2]}})",
       ": malformed \"preprocessing\": \"std[1]\" is 0; it must be a number above 0"},
      {"model.json", R"({"preprocessing": {"mean": [0.5, 0.5]}})",
       ": malformed \"preprocessing\": \"mean\" is [0.5,0.5]; it is a list of 1 or 3 numbers (one per channel)"},
      {"model.json", R"({"preprocessing": {"crop_fraction": 1.5}})",
       ": malformed \"preprocessing\": \"crop_fraction\" is 1.5; it is the part of the resized picture kept, at most "
       "1"},
      {"model.json", R"({"preprocessing": {"channel-order": "bgr"}})",
       ": malformed \"preprocessing\": unknown field \"channel-order\" (the fields are resize, crop_fraction, invert, "
       "channel_order, value_range, mean, std)"},
      {"model.json", R"({"preprocessing": {"value_range": "255"}})",
       ": malformed \"preprocessing\": \"value_range\" is \"255\"; it must be a number above 0"},
      {"model.json", R"([0.9])", ": a model card is a JSON object"},
      {"model.json", R"({"test_accuracy": 0.9, "class_names": "cat"})",
       ": malformed model card: \"class_names\" is not a list of names"},
      {"model.json", R"({"test_accuracy": 0.9, "class_names": ["cat", " ", "dog"]})",
       ": malformed model card: class_names[1] is not a name (a string that is not blank)"},
      {"model.json", R"({"test_accuracy": 0.9, "class_names": ["cat", 7]})",
       ": malformed model card: class_names[1] is not a name (a string that is not blank)"},
  };
  for (const auto& c : cases) {
    const fs::path file = dir.write(c.name, std::vector<uint8_t>(c.content.begin(), c.content.end()));
    const auto& read = std::find_if(jsonReaders().begin(), jsonReaders().end(), [&](const auto& r) {
                         return r.first == c.name;
                       })->second;
    const std::string error = errorOf([&] { read(file); });
    EXPECT_EQ(error, file.string() + c.says) << c.content;
  }
}

std::string contentsOf(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Numbers in a benchmark file from another machine are checked before they are used: a stride of
// 0 divided by zero (SIGFPE) when the layer's output was counted, a float beyond int's range
// converted with undefined behaviour, and the group check's refusal did not name the file.
TEST(JsonFiles, BenchmarkNumbersThatWouldDivideByZeroOrOverflowAreRefused) {
  TempDir dir;
  BenchmarkReport report;
  report.model = "m";
  report.date = "d";
  report.device = "x";
  report.repeats = 3;
  BenchmarkRun run;
  run.variant = "cpu-reference";
  run.batch = 2;
  LayerBenchmark layer;
  layer.node = "conv";
  layer.problem.inHeight = layer.problem.inWidth = 8;
  layer.problem.kernelHeight = layer.problem.kernelWidth = 3;
  layer.ranVariant = "cpu-reference";
  run.layers.push_back(layer);
  report.runs.push_back(run);
  const fs::path good = dir.path() / "good.json";
  writeBenchmarkJson(report, good);
  ASSERT_EQ(readBenchmarkJson(good).runs.at(0).layers.at(0).problem.outHeight(), 6);
  const nlohmann::json original = nlohmann::json::parse(contentsOf(good));
  const struct {
    std::string name;
    std::function<void(nlohmann::json&)> change;
    std::string says;
  } cases[] = {
      {"stride 0",
       [](nlohmann::json& j) {
         j["runs"][0]["layers"][0]["problem"]["stride"] = {0, 1};
       },
       "\"stride\" is 0, not a whole number from 1 to 32768"},
      {"batch 1e300", [](nlohmann::json& j) { j["runs"][0]["batch"] = 1e300; },
       "\"batch\" is 1e+300, not a whole number from 1 to 1073741824"},
      {"repeats -1", [](nlohmann::json& j) { j["repeats"] = -1; }, "\"repeats\" is -1, not a whole number"},
      {"kernel larger than the input",
       [](nlohmann::json& j) { j["runs"][0]["layers"][0]["problem"]["kernel_height"] = 9; },
       "a layer's problem has a kernel larger than its padded input (8x8)"},
      {"group that does not divide", [](nlohmann::json& j) { j["runs"][0]["layers"][0]["problem"]["group"] = 3; },
       "a layer's problem has group 3"},
      {"output elements as a float", [](nlohmann::json& j) { j["runs"][0]["layers"][0]["output_elements"] = 1e30; },
       "\"output_elements\" is 1e+30, not a whole number of elements"},
  };
  for (const auto& c : cases) {
    nlohmann::json changed = original;
    c.change(changed);
    const std::string text = changed.dump(1);
    const fs::path file = dir.write("bench.json", std::vector<uint8_t>(text.begin(), text.end()));
    const std::string error = errorOf([&] { readBenchmarkJson(file); });
    EXPECT_EQ(error.rfind(file.string() + ": malformed benchmark file: ", 0), 0u) << c.name << ": " << error;
    EXPECT_NE(error.find(c.says), std::string::npos) << c.name << ": " << error;
  }
}

// ---------------------------------------------------------------------------------------------
// Saving never leaves half a file over a good one.

std::vector<std::string> namesIn(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AtomicSave, ReplacesTheFileWholeAndLeavesNoTemporaryFile) {
  TempDir dir;
  const fs::path file = dir.path() / "results.csv";
  writeFileAtomically(file, "first\n");
  EXPECT_EQ(contentsOf(file), "first\n");
  const std::string longer(100000, 'x');
  writeFileAtomically(file, longer);
  EXPECT_EQ(contentsOf(file), longer);
  writeFileAtomically(file, "");
  EXPECT_EQ(contentsOf(file), "");
  EXPECT_EQ(namesIn(dir.path()), std::vector<std::string>{"results.csv"});
}

TEST(AtomicSave, ReadOnlyFolderFailsNamingTheFileAndTheOldFileIsIntact) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes into read-only folders";
  TempDir dir;
  const fs::path folder = dir.path() / "locked";
  fs::create_directories(folder);
  const fs::path file = folder / "bench.json";
  writeFileAtomically(file, "the good file\n");
  fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec);
  expectError([&] { writeFileAtomically(file, "half"); },
              {file.string() + ": cannot be written (Permission denied)", "any file there before is unchanged"});
  // The writers of results go through it: the benchmark JSON and CSV, the profile JSON.
  BenchmarkReport report;
  report.model = "m";
  expectError([&] { writeBenchmarkJson(report, file); }, {file.string() + ": cannot be written"});
  expectError([&] { writeBenchmarkCsv(report, folder / "bench.csv"); }, {"bench.csv: cannot be written"});
  expectError([&] { writeKernelProfileJson(KernelProfile{}, folder / "profile.json"); },
              {"profile.json: cannot be written"});
  fs::permissions(folder, fs::perms::owner_all);
  EXPECT_EQ(contentsOf(file), "the good file\n");
  EXPECT_EQ(namesIn(folder), std::vector<std::string>{"bench.json"});
}

TEST(AtomicSave, TargetThatCannotBeReplacedFailsAndLeavesNothingBehind) {
  // A folder where the file should go: the temporary file is written, the rename fails, and the
  // temporary file is removed again (the step a full disk or a crash would interrupt).
  TempDir dir;
  const fs::path file = dir.path() / "bench.json";
  writeFileAtomically(file, "the good file\n");
  // A target that is a folder: the write succeeds, the rename fails; the folder stays.
  const fs::path folder = dir.path() / "taken";
  fs::create_directories(folder / "inside");
  expectError([&] { writeFileAtomically(folder, "x"); }, {folder.string() + ": cannot be written"});
  EXPECT_TRUE(fs::is_directory(folder / "inside"));
  EXPECT_EQ(contentsOf(file), "the good file\n");
  EXPECT_EQ(namesIn(dir.path()), (std::vector<std::string>{"bench.json", "taken"}));
}

TEST(InputFiles, DataFolderWhoseImageFileIsAFifoOrALoopIsRefusedNotHungOrThrownAsInternal) {
  for (const std::string kind : {"fifo", "loop"}) {
    TempDir dir;
    const fs::path images = dir.path() / "t10k-images-idx3-ubyte";
    if (kind == "fifo") {
      ASSERT_EQ(mkfifo(images.c_str(), 0600), 0);
    } else {
      fs::create_symlink(dir.path() / "t10k-images-idx3-ubyte.gz", images);
      fs::create_symlink(images, dir.path() / "t10k-images-idx3-ubyte.gz");
    }
    std::vector<uint8_t> labels = idxHeader({2});
    labels.insert(labels.end(), {1, 2});
    dir.write("t10k-labels-idx1-ubyte", labels);
    expectError([&] { ImageSet::loadIdxFolder(dir.path()); },
                {images.string() + ": ", kind == "fifo" ? "named pipe" : "symbolic link loop"});
  }
}

TEST(InputFiles, ModelFileOverTheLimitIsRefusedBeforeItIsRead) {
  // A sparse file: the old loader read up to 2 GiB of it into memory, then parsed a copy.
  TempDir dir;
  const fs::path file = dir.write("huge.onnx", {0x08, 0x07});
  ASSERT_EQ(truncate(file.c_str(), 1500000000LL), 0);
  expectError([&] { loadOnnxModel(file); }, {file.string() + ": ", "1.5 GB", "268.4 MB limit"});
  EXPECT_LT(peakRss(), kOneGB);
}

// ---------------------------------------------------------------------------------------------
// IDX sizes: checked from the header before reading or inflating the data.

TEST(IdxLimits, GzipBombIsRefusedFromItsHeaderBeforeInflating) {
  // 1 MB of gzip that inflates to 63 x 4096 x 4096 bytes (1.06 GB), as in the held-out corpus.
  TempDir dir;
  const fs::path bomb = dir.write("t10k-images-idx3-ubyte.gz", gzipStream(idxHeader({63, 4096, 4096}), 63ULL << 24));
  ASSERT_LT(fs::file_size(bomb), 8u << 20);
  expectError([&] { readIdxFile(bomb); }, {bomb.string() + ": ", "63x4096x4096", "1.1 GB", "limit"});
  EXPECT_LT(peakRss(), kOneGB);
}

TEST(IdxLimits, GzipWithMoreDataThanTheHeaderDeclaresIsRefused) {
  TempDir dir;
  std::vector<uint8_t> head = idxHeader({4, 4});
  const fs::path file = dir.write("long.gz", gzipStream(head, 16 + 100));
  expectError([&] { readIdxFile(file); }, {file.string() + ": ", "after the data"});
  const fs::path shortFile = dir.write("short.gz", gzipStream(head, 10));
  expectError([&] { readIdxFile(shortFile); }, {shortFile.string() + ": ", "truncated"});
}

TEST(IdxLimits, PlainFileIsCheckedAgainstItsHeaderBeforeItIsRead) {
  // A sparse file of 1.5 GB whose header declares exactly that much data: refused by the size
  // limit without reading it (the old reader read it whole first).
  TempDir dir;
  const fs::path file = dir.write("t10k-images-idx3-ubyte", idxHeader({1500, 1000, 1000}));
  ASSERT_EQ(truncate(file.c_str(), 16 + 1500000000LL), 0);
  expectError([&] { readIdxFile(file); }, {file.string() + ": ", "1500x1000x1000", "limit"});
  EXPECT_LT(peakRss(), kOneGB);
  // A header promising more than the file holds: refused before allocating what it promises.
  const fs::path liar = dir.write("liar", idxHeader({60000, 28, 28}));
  expectError([&] { readIdxFile(liar); }, {liar.string() + ": ", "truncated", "47040000"});
}

// ---------------------------------------------------------------------------------------------
// Image sizes: read from the header before decoding.

void putBig32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

void pngChunk(std::vector<uint8_t>& out, const char* type, const std::vector<uint8_t>& data) {
  putBig32(out, static_cast<uint32_t>(data.size()));
  std::vector<uint8_t> typed(type, type + 4);
  typed.insert(typed.end(), data.begin(), data.end());
  out.insert(out.end(), typed.begin(), typed.end());
  putBig32(out, static_cast<uint32_t>(crc32(0, typed.data(), static_cast<uInt>(typed.size()))));
}

// An 8-bit gray PNG of width x height whose every pixel is `value`, compressed as a stream.
std::vector<uint8_t> grayPng(uint32_t width, uint32_t height, uint8_t value = 0) {
  std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> ihdr;
  putBig32(ihdr, width);
  putBig32(ihdr, height);
  ihdr.insert(ihdr.end(), {8, 0, 0, 0, 0});
  pngChunk(png, "IHDR", ihdr);
  z_stream s{};
  deflateInit(&s, 9);
  std::vector<uint8_t> row(width + 1, value), idat, buffer(1 << 20);
  row[0] = 0;  // filter: none
  for (uint32_t y = 0; y <= height; ++y) {
    const bool last = y == height;
    s.next_in = last ? nullptr : row.data();
    s.avail_in = last ? 0 : static_cast<uInt>(row.size());
    do {
      s.next_out = buffer.data();
      s.avail_out = static_cast<uInt>(buffer.size());
      deflate(&s, last ? Z_FINISH : Z_NO_FLUSH);
      idat.insert(idat.end(), buffer.data(), buffer.data() + (buffer.size() - s.avail_out));
    } while (s.avail_out == 0);
  }
  deflateEnd(&s);
  pngChunk(png, "IDAT", idat);
  pngChunk(png, "IEND", {});
  return png;
}

TEST(ImageLimits, SmallPngStillDecodes) {
  if (!imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV";
  TempDir dir;
  const Picture image = loadImageFile(dir.write("small.png", grayPng(7, 5, 51)), false);
  ASSERT_EQ(image.width, 7);
  ASSERT_EQ(image.height, 5);
  EXPECT_FLOAT_EQ(image.at(4, 6), 0.2f);
}

TEST(ImageLimits, PngThatDecodesTo30000By30000IsRefusedFromItsHeader) {
  if (!imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV";
  TempDir dir;
  const fs::path file = dir.write("bomb.png", grayPng(30000, 30000));
  ASSERT_LT(fs::file_size(file), 2u << 20);
  expectError([&] { loadImageFile(file, false); }, {file.string() + ": ", "30000x30000", "900.0 megapixels", "50"});
  EXPECT_LT(peakRss(), kOneGB);
}

// A header that states the size twice must not pass the check with the small one while the
// decoder takes the large one: libtiff keeps the first of two equal tags (and reads any integer
// type), a PAM header may say WIDTH twice. (The fuzzer's 162-byte input of issue 23, which made
// the decoder allocate 2.7 GB, was not kept; these are the ways a short header can state a size
// the check misses.)
TEST(ImageLimits, SizeStatedTwiceIsCheckedAtItsLargest) {
  if (!imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV";
  TempDir dir;
  // TIFF (little-endian) directory entries: tag, type, count 1, value.
  const auto tiff = [](const std::vector<std::array<uint32_t, 3>>& entries) {
    std::vector<uint8_t> bytes = {'I', 'I', 42, 0, 8, 0, 0, 0, static_cast<uint8_t>(entries.size()), 0};
    for (const auto& [tag, type, value] : entries) {
      bytes.insert(bytes.end(), {static_cast<uint8_t>(tag), static_cast<uint8_t>(tag >> 8), static_cast<uint8_t>(type),
                                 0, 1, 0, 0, 0});
      for (int shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<uint8_t>(value >> shift));
    }
    bytes.insert(bytes.end(), {0, 0, 0, 0});
    return bytes;
  };
  constexpr uint32_t kShort = 3, kLong = 4, kSignedLong = 9;
  const std::string pam = "P7\nWIDTH 1\nHEIGHT 1\nWIDTH 30000\nHEIGHT 30000\nDEPTH 3\nMAXVAL 255\nENDHDR\n";
  const struct {
    std::string name;
    std::vector<uint8_t> bytes;
  } cases[] = {
      {"large-first.tif", tiff({{256, kLong, 30000}, {257, kLong, 30000}, {256, kShort, 1}, {257, kShort, 1}})},
      {"large-last.tif", tiff({{256, kShort, 1}, {257, kShort, 1}, {256, kLong, 30000}, {257, kLong, 30000}})},
      {"signed-first.tif",
       tiff({{256, kSignedLong, 30000}, {257, kSignedLong, 30000}, {256, kShort, 1}, {257, kShort, 1}})},
      {"twice.pam", std::vector<uint8_t>(pam.begin(), pam.end())},
  };
  for (const auto& c : cases) {
    const fs::path file = dir.write(c.name, c.bytes);
    expectError([&] { loadImageFile(file, false); }, {file.string() + ": ", "30000x30000", "900.0 megapixels"});
  }
  // A negative width in a signed type is no size at all: refused as the largest.
  const fs::path negative = dir.write("negative.tif", tiff({{256, kSignedLong, 0xFFFFFFFFu}, {257, kShort, 1}}));
  expectError([&] { loadImageFile(negative, false); }, {negative.string() + ": ", "4294967295x1"});
  // A type that is no integer leaves the size unknown.
  const fs::path rational = dir.write("rational.tif", tiff({{256, 5, 8}, {257, kShort, 1}}));
  expectError([&] { loadImageFile(rational, false); }, {rational.string() + ": ", "gives no picture size"});
  EXPECT_LT(peakRss(), kOneGB);
}

TEST(ImageLimits, JpegBmpPgmTiffAndWebpHeadersAreCheckedToo) {
  if (!imageFilesSupported()) GTEST_SKIP() << "this build has no OpenCV";
  TempDir dir;
  // JPEG: SOI, a JFIF APP0 segment, then a baseline SOF0 of 20000 x 20000, one component.
  std::vector<uint8_t> jpeg = {0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0};
  jpeg.insert(jpeg.end(), {0xFF, 0xC0, 0, 11, 8, 0x4E, 0x20, 0x4E, 0x20, 1, 1, 0x11, 0});
  jpeg.insert(jpeg.end(), {0xFF, 0xD9});
  // BMP: 30000 x -30000 (top-down), 8 bits per pixel, no pixel data.
  std::vector<uint8_t> bmp = {'B', 'M', 0, 0, 0, 0, 0, 0, 0, 0, 54, 4, 0, 0, 40, 0, 0, 0};
  const auto putLittle32 = [&](uint32_t v) {
    for (int shift = 0; shift < 32; shift += 8) bmp.push_back(static_cast<uint8_t>(v >> shift));
  };
  putLittle32(30000);
  putLittle32(static_cast<uint32_t>(-30000));
  bmp.insert(bmp.end(), {1, 0, 8, 0});
  bmp.resize(54 + 1024, 0);
  // TIFF (little-endian): one directory with ImageWidth 30000 and ImageLength 30000 as LONGs.
  std::vector<uint8_t> tiff = {'I', 'I', 42, 0, 8, 0, 0, 0, 2, 0};
  for (const uint16_t tag : {uint16_t{256}, uint16_t{257}})
    tiff.insert(tiff.end(),
                {static_cast<uint8_t>(tag & 0xFF), static_cast<uint8_t>(tag >> 8), 4, 0, 1, 0, 0, 0, 0x30, 0x75, 0, 0});
  tiff.insert(tiff.end(), {0, 0, 0, 0});
  // WebP extended format: a VP8X chunk with a canvas of 30000 x 30000 (stored minus one).
  std::vector<uint8_t> webp = {'R', 'I', 'F', 'F', 22, 0, 0, 0, 'W', 'E',  'B',  'P', 'V',  'P',  '8',
                               'X', 10,  0,   0,   0,  0, 0, 0, 0,   0x2F, 0x75, 0,   0x2F, 0x75, 0};
  const std::string pgmHeader = "P5\n# a comment\n40000 20000\n255\n";
  const std::vector<uint8_t> pgm(pgmHeader.begin(), pgmHeader.end());
  const struct {
    std::string name;
    std::vector<uint8_t> bytes;
    std::string size;
  } cases[] = {{"big.jpg", jpeg, "20000x20000"},
               {"big.bmp", bmp, "30000x30000"},
               {"big.pgm", pgm, "40000x20000"},
               {"big.tif", tiff, "30000x30000"},
               {"big.webp", webp, "30000x30000"}};
  for (const auto& c : cases) {
    const fs::path file = dir.write(c.name, c.bytes);
    expectError([&] { loadImageFile(file, false); }, {file.string() + ": ", c.size, "megapixels"});
  }
  EXPECT_LT(peakRss(), kOneGB);
}

}  // namespace
}  // namespace convscope
