// The IDX reader on good and malformed input: every malformation gives an error naming the file
// and the problem; nothing crashes or allocates what the header merely claims.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>

#include "app/core/data/idx_file.h"
#include "app/core/data/image_set.h"
#include "tests/core/test_support.h"

namespace convscope {
namespace {

using testing::expectError;
using testing::TempDir;

std::vector<uint8_t> idxBytes(uint8_t type, std::vector<uint32_t> dims, size_t dataBytes, uint8_t fill = 7) {
  std::vector<uint8_t> bytes = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) bytes.push_back(static_cast<uint8_t>(d >> shift));
  bytes.insert(bytes.end(), dataBytes, fill);
  return bytes;
}

std::vector<uint8_t> gzip(const std::vector<uint8_t>& plain) {
  z_stream s{};
  deflateInit2(&s, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::vector<uint8_t> out(deflateBound(&s, plain.size()) + 64);
  s.next_in = const_cast<Bytef*>(plain.data());
  s.avail_in = static_cast<uInt>(plain.size());
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

TEST(IdxFile, ReadsPlainAndGzippedImages) {
  TempDir dir;
  const std::vector<uint8_t> bytes = idxBytes(0x08, {3, 4, 5}, 60, 42);
  for (const auto& file : {dir.write("plain-idx3-ubyte", bytes), dir.write("packed-idx3-ubyte.gz", gzip(bytes))}) {
    const IdxArray array = readIdxFile(file);
    EXPECT_EQ(array.dims, (std::vector<int64_t>{3, 4, 5})) << file;
    ASSERT_EQ(array.values.size(), 60u);
    EXPECT_EQ(array.values[59], 42);
  }
}

TEST(IdxFile, RefusesMissingFileAndFolder) {
  TempDir dir;
  expectError([&] { readIdxFile(dir.path() / "nope"); }, {"nope", "file not found"});
  expectError([&] { readIdxFile(dir.path()); }, {"is a directory"});
}

TEST(IdxFile, RefusesWrongMagic) {
  expectError([] { parseIdx({0x50, 0x4b, 3, 4, 0, 0, 0, 1}, "zip.idx"); }, {"zip.idx", "not an IDX file"});
}

TEST(IdxFile, RefusesElementTypesOtherThanUnsignedByte) {
  expectError([] { parseIdx(idxBytes(0x0D, {2}, 8), "floats.idx"); }, {"floats.idx", "float32", "unsigned-byte"});
}

TEST(IdxFile, RefusesBadRank) {
  expectError([] { parseIdx({0, 0, 8, 0}, "r0"); }, {"r0", "rank 0"});
  expectError([] { parseIdx({0, 0, 8, 9}, "r9"); }, {"r9", "rank 9"});
}

TEST(IdxFile, RefusesTruncatedHeaderAndData) {
  expectError([] { parseIdx({0, 0}, "tiny"); }, {"tiny", "too short"});
  expectError([] { parseIdx({0, 0, 8, 3, 0, 0, 0, 10}, "header"); }, {"header", "truncated in the IDX header"});
  expectError([] { parseIdx(idxBytes(0x08, {10, 28, 28}, 7839), "data"); }, {"data", "truncated", "7840"});
}

TEST(IdxFile, RefusesTrailingBytes) {
  expectError([] { parseIdx(idxBytes(0x08, {4}, 5), "long"); }, {"long", "1 unexpected bytes"});
}

TEST(IdxFile, RefusesAbsurdDimensionsWithoutAllocating) {
  expectError(
      [] {
        parseIdx(idxBytes(0x08, {0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu}, 16), "huge");
      },
      {"huge", "absurd IDX dimension"});
  expectError([] { parseIdx(idxBytes(0x08, {60000, 60000, 60000}, 16), "big"); }, {"big", "216.0 TB", "limit"});
  expectError([] { parseIdx(idxBytes(0x08, {0, 28}, 0), "zero"); }, {"zero", "dimension 0 is zero"});
}

TEST(IdxFile, RefusesCorruptAndTruncatedGzip) {
  TempDir dir;
  std::vector<uint8_t> packed = gzip(idxBytes(0x08, {100, 28, 28}, 78400, 3));
  std::vector<uint8_t> cut(packed.begin(), packed.begin() + static_cast<long>(packed.size() / 2));
  expectError([&] { readIdxFile(dir.write("cut.gz", cut)); }, {"cut.gz", "truncated"});
  std::vector<uint8_t> garbage = packed;
  for (size_t i = 12; i < garbage.size(); i += 7) garbage[i] ^= 0x5A;
  expectError([&] { readIdxFile(dir.write("garbage.gz", garbage)); }, {"garbage.gz"});
}

// A few bytes of gzip whose header claims 256 MB (the IDX fuzzer's finding: a 21-byte file that
// took 10 s and 256 MB to refuse) are refused as truncated by a process that never holds more
// than a few chunks.
TEST(IdxFile, AShortGzipClaimingAHugeArrayIsRefusedWithoutAllocatingIt) {
  TempDir dir;
  const std::filesystem::path file = dir.write("claims-256MB-idx1-ubyte.gz", gzip(idxBytes(0x08, {256u << 20}, 10)));
  expectError([&] { readIdxFile(file); }, {"claims-256MB-idx1-ubyte.gz", "truncated", "holds 10"});
  // In a child, whose peak resident size starts at what it inherits: its growth is the reader's.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    bool refused = false;
    try {
      readIdxFile(file);
    } catch (const Error&) {
      refused = true;
    }
    getrusage(RUSAGE_SELF, &after);
    const long grewKb = after.ru_maxrss - before.ru_maxrss;
    _exit(!refused ? 1 : grewKb > 64 * 1024 ? 2 : 0);  // far below the 262,144 kB claimed
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 1) << "the file was not refused";
  EXPECT_NE(WEXITSTATUS(status), 2) << "refusing it grew the reader's resident size by more than 64 MB";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(IdxFile, SurvivesRandomGarbage) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> bytes(static_cast<size_t>(rng() % 64));
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    if (trial % 3 == 0 && bytes.size() >= 4) bytes[0] = bytes[1] = 0, bytes[2] = 8, bytes[3] = 1 + rng() % 4;
    try {
      parseIdx(bytes, "random");
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("random"), std::string::npos);
    }
  }
}

TEST(ImageSetFolder, LoadsImagesWithLabelsAndFashionClassNames) {
  TempDir dir;
  dir.write("t10k-images-idx3-ubyte", idxBytes(0x08, {2, 3, 3}, 18, 255));
  dir.write("t10k-labels-idx1-ubyte.gz", gzip(idxBytes(0x08, {2}, 2, 9)));
  const ImageSet set = ImageSet::loadIdxFolder(dir.path());
  EXPECT_EQ(set.count(), 2);
  EXPECT_EQ(set.height(), 3);
  EXPECT_EQ(set.label(1), 9);
  EXPECT_EQ(set.classNames()[9], "Ankle boot");
  EXPECT_FLOAT_EQ(set.image(0).at(2, 2), 1.0f);
}

TEST(ImageSetFolder, RefusesMismatchedCountsMissingFilesAndBadLabels) {
  TempDir dir;
  expectError([&] { ImageSet::loadIdxFolder(dir.path() / "absent"); }, {"absent", "data folder not found"});
  expectError([&] { ImageSet::loadIdxFolder(dir.path()); }, {"no t10k images IDX file"});
  dir.write("t10k-images-idx3-ubyte", idxBytes(0x08, {2, 3, 3}, 18));
  dir.write("t10k-labels-idx1-ubyte", idxBytes(0x08, {3}, 3, 1));
  expectError([&] { ImageSet::loadIdxFolder(dir.path()); }, {"2 images but 3 labels"});
  dir.write("t10k-labels-idx1-ubyte", idxBytes(0x08, {2}, 2, 12));
  expectError([&] { ImageSet::loadIdxFolder(dir.path()); }, {"label 12", "outside the 10 classes"});
  dir.write("t10k-labels-idx1-ubyte", idxBytes(0x08, {2, 1}, 2, 1));
  expectError([&] { ImageSet::loadIdxFolder(dir.path()); }, {"labels of rank 1"});
}

TEST(ImageSetFolder, ImagesOnlyNeverReadTheLabelsFile) {
  // What the process that runs a student's kernel reads: the labels file is not opened, so a broken
  // one (which loadIdxFolder refuses) or none at all changes nothing.
  TempDir dir;
  std::vector<uint8_t> images = idxBytes(0x08, {3, 2, 2}, 0);
  for (uint8_t v : {0, 51, 102, 153, 204, 255, 1, 2, 3, 4, 5, 6}) images.push_back(v);
  dir.write("t10k-images-idx3-ubyte", images);
  const ImageSet withoutLabelsFile = ImageSet::loadIdxImages(dir.path());
  dir.write("t10k-labels-idx1-ubyte", std::vector<uint8_t>{'n', 'o', 't', ' ', 'i', 'd', 'x'});
  expectError([&] { ImageSet::loadIdxFolder(dir.path()); }, {"t10k-labels-idx1-ubyte"});
  const ImageSet set = ImageSet::loadIdxImages(dir.path());
  for (const ImageSet* s : {&withoutLabelsFile, &set}) {
    ASSERT_EQ(s->count(), 3);
    EXPECT_FALSE(s->hasLabels());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(s->label(i), ImageSet::kNoLabel);
    EXPECT_FLOAT_EQ(s->image(0).at(0, 1), 51.0f / 255.0f);
    EXPECT_FLOAT_EQ(s->image(2).at(1, 1), 6.0f / 255.0f);
    ASSERT_TRUE(s->hasBytes());
    EXPECT_EQ(s->bytes(1)[0], 204);
  }
  // The same pixels as the labelled set's.
  dir.write("t10k-labels-idx1-ubyte", idxBytes(0x08, {3}, 3, 4));
  const ImageSet labelled = ImageSet::loadIdxFolder(dir.path());
  for (int i = 0; i < 3; ++i)
    for (int y = 0; y < 2; ++y)
      for (int x = 0; x < 2; ++x) EXPECT_EQ(labelled.image(i).at(y, x), set.image(i).at(y, x));
  expectError([&] { ImageSet::loadIdxImages(dir.path() / "absent"); }, {"absent", "data folder not found"});
}

TEST(ImageSetFolder, ReadsTheInstalledFashionMnistTestSet) {
  const ImageSet set = ImageSet::loadIdxFolder(defaultDataFolder());
  EXPECT_EQ(set.count(), 10000);
  EXPECT_EQ(set.height(), 28);
  EXPECT_EQ(set.width(), 28);
  EXPECT_EQ(set.label(0), 9);  // the first Fashion-MNIST test image is an ankle boot
}

TEST(ImageSetFolder, ReadsTheInstalledFashionMnistTrainingSet) {
  // Debian's package has both splits; a folder CONVSCOPE_DATA names may hold only the test set
  // (the GPU machine gets only that): then there is nothing to read here.
  const auto folder = defaultDataFolder();
  if (!std::filesystem::exists(folder / "train-images-idx3-ubyte.gz") &&
      !std::filesystem::exists(folder / "train-images-idx3-ubyte"))
    GTEST_SKIP() << folder.string() << " holds no training set";
  const ImageSet train = ImageSet::loadIdxFolder(folder, Split::Train);
  EXPECT_EQ(train.count(), 60000);
}

}  // namespace
}  // namespace convscope
