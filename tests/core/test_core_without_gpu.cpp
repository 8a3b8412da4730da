// The core on its own: this program links app/core and nothing of gpu/, as the one-way seam
// promises. It must link (no symbol of gpu/ is needed), list only the CPU rows, say there is no
// GPU, and classify with the CPU variants.
#include <gtest/gtest.h>

#include "app/core/conv/user_kernel_compiler.h"
#include "app/core/conv/user_kernel_source.h"
#include "app/core/conv/variant_table.h"
#include "app/core/data/image_set.h"
#include "app/core/device/gpu_platform.h"
#include "app/core/engine/engine.h"
#include "app/core/model/model_card.h"
#include "app/core/model/onnx_loader.h"
#include "app/core/util/error.h"

namespace convscope {
namespace {

TEST(CoreWithoutGpu, ListsOnlyTheCpuRowsAndSaysThereIsNoGpu) {
  for (const ConvVariant& v : convVariants()) EXPECT_FALSE(v.runsOnGpu()) << v.id;
  EXPECT_GE(convVariants().size(), 2u);
  EXPECT_FALSE(gpuInfo().usable);
  EXPECT_EQ(gpuInfo().unusableReason, "this build of ConvScope has no CUDA support");
  EXPECT_THROW(createGpuDevice(), Error);
  EXPECT_FALSE(findConvVariant(defaultConvVariant()).runsOnGpu());
}

// No compiler was installed: compiling a student's kernel says, under the file's name, why not,
// and its row cannot be added.
TEST(CoreWithoutGpu, AStudentsKernelCannotBeCompiledAndSaysWhy) {
  EXPECT_NE(userKernelCompiler().unavailableReason().find("does not link ConvScope's GPU library"), std::string::npos)
      << userKernelCompiler().unavailableReason();
  const UserKernelSource source = parseUserKernelSource("/somewhere/my_conv.cu", "__global__ void convscope_conv() {}");
  const CompiledUserKernel kernel = userKernelCompiler().compile(source);
  ASSERT_FALSE(kernel.ok());
  EXPECT_TRUE(kernel.image.empty());
  EXPECT_EQ(kernel.errors.back().file, "my_conv.cu");
  EXPECT_EQ(kernel.errors.back().message, userKernelCompiler().unavailableReason());
  const size_t rows = convVariants().size();
  try {
    userKernelCompiler().install(kernel);
    ADD_FAILURE() << "installed a kernel that did not compile";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/somewhere/my_conv.cu"), std::string::npos) << e.what();
  }
  EXPECT_EQ(convVariants().size(), rows);
}

TEST(CoreWithoutGpu, ClassifiesAsPyTorchDidWithTheCpuVariants) {
  const std::string path = std::string(CONVSCOPE_MODELS_DIR) + "/course-high.onnx";
  const auto model = loadOnnxModel(path);
  const auto card = readModelCard(path);
  ASSERT_TRUE(card);
  const ImageSet images = ImageSet::loadIdxFolder(defaultDataFolder());
  Engine engine(model, defaultConvVariant());
  const InferenceResult result = engine.infer(images.batch(0, 50, 48, 48));
  for (int i = 0; i < 50; ++i) {
    int best = 0;
    for (int c = 1; c < 10; ++c)
      if (result.probabilities[i * 10 + c] > result.probabilities[i * 10 + best]) best = c;
    EXPECT_EQ(best, card->predictions[static_cast<size_t>(i)] - '0') << "image " << i;
  }
}

}  // namespace
}  // namespace convscope
