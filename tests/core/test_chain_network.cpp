// The whole-network variant's side of the plan, without a GPU: which models are chains of conv
// and fully connected layers (the shipped ones, odd built ones), what breaks a chain (a branch, a
// capturing plan), and that the plan says so in every stage that falls back.
#include <gtest/gtest.h>

#include "app/core/conv/variant_table.h"
#include "app/core/engine/chain_network.h"
#include "app/core/engine/plan.h"
#include "app/core/model/onnx_loader.h"
#include "tests/core/chain_models.h"

namespace convscope {
namespace {

const std::string kModels = CONVSCOPE_MODELS_DIR;
constexpr const char* kWholeNetwork = "gpu-whole-network";

TEST(ChainNetwork, TheShippedModelsAreChainsWithTheirLayersFlops) {
  for (const std::string name : {"course-high", "course-low", "lenet5"}) {
    SCOPED_TRACE(name);
    const auto model = loadOnnxModel(kModels + "/" + name + ".onnx");
    std::string whyNot;
    const std::optional<ChainNetwork> network = matchChainNetwork(*model, &whyNot);
    ASSERT_TRUE(network) << whyNot;
    EXPECT_EQ(network->convs.size(), 2u);
    EXPECT_EQ(network->nodes.size(), model->nodes.size());
    EXPECT_EQ(network->classes(), 10);
    // The FLOPs the layer table counts for one image, node by node.
    int64_t flops = 0;
    for (const LayerInfo& layer : model->layers()) flops += layer.flops;
    EXPECT_EQ(network->flopsPerImage, flops);
    for (const ChainConv& conv : network->convs) {
      EXPECT_TRUE(conv.epilogue.hasActivation);
      EXPECT_TRUE(conv.epilogue.hasPool);
    }
  }
}

TEST(ChainNetwork, ReadsEveryPartOfAnOddChain) {
  const auto model = testing::oddChainModel();
  std::string whyNot;
  const std::optional<ChainNetwork> network = matchChainNetwork(*model, &whyNot);
  ASSERT_TRUE(network) << whyNot;
  ASSERT_EQ(network->convs.size(), 2u);
  EXPECT_EQ(network->convs[0].problem.padTop, 1);
  EXPECT_EQ(network->convs[0].epilogue.activation, Activation::Relu);
  EXPECT_TRUE(network->convs[0].epilogue.maxPool);
  EXPECT_EQ(network->convs[0].pooledHeight, 6);
  EXPECT_EQ(network->convs[0].pooledWidth, 8);
  EXPECT_EQ(network->convs[1].problem.strideHeight, 2);
  EXPECT_EQ(network->convs[1].bias, "");
  EXPECT_FALSE(network->convs[1].epilogue.maxPool);
  EXPECT_EQ(network->convs[1].pooledHeight, 1);
  EXPECT_EQ(network->convs[1].pooledWidth, 6);
  ASSERT_EQ(network->dense.size(), 2u);
  EXPECT_EQ(network->dense[0].step.inputs, 42);
  EXPECT_TRUE(network->dense[0].hasActivation);
  EXPECT_EQ(network->dense[1].bias, "");
  EXPECT_FALSE(network->dense[1].hasActivation);
  EXPECT_TRUE(network->softmax);
  EXPECT_EQ(network->classes(), 3);
}

TEST(ChainNetwork, ReadsEveryPartOfTheOtherChain) {
  const auto model = testing::otherChainModel();
  std::string whyNot;
  const std::optional<ChainNetwork> network = matchChainNetwork(*model, &whyNot);
  ASSERT_TRUE(network) << whyNot;
  ASSERT_EQ(network->convs.size(), 3u);
  EXPECT_FALSE(network->convs[0].epilogue.hasActivation);
  EXPECT_TRUE(network->convs[0].epilogue.maxPool);
  EXPECT_EQ(network->convs[0].epilogue.pool.kernelHeight, 2);
  EXPECT_EQ(network->convs[0].epilogue.pool.kernelWidth, 1);
  EXPECT_EQ(network->convs[0].pooledHeight, 5);
  EXPECT_EQ(network->convs[0].pooledWidth, 9);
  EXPECT_EQ(network->convs[1].problem.strideWidth, 2);
  EXPECT_EQ(network->convs[1].bias, "");
  EXPECT_EQ(network->convs[1].epilogue.activation, Activation::Relu);
  EXPECT_FALSE(network->convs[1].epilogue.maxPool);
  EXPECT_EQ(network->convs[1].pooledHeight, 4);
  EXPECT_EQ(network->convs[1].pooledWidth, 2);
  EXPECT_EQ(network->convs[2].epilogue.activation, Activation::Tanh);
  EXPECT_FALSE(network->convs[2].epilogue.hasPool);
  EXPECT_EQ(network->convs[2].pooledHeight, 4);
  EXPECT_EQ(network->convs[2].pooledWidth, 2);
  ASSERT_EQ(network->dense.size(), 2u);
  EXPECT_EQ(network->dense[0].step.inputs, 24);
  EXPECT_FALSE(network->dense[0].step.weightsTransposed);
  EXPECT_TRUE(network->dense[1].step.weightsTransposed);
  EXPECT_FALSE(network->softmax);
  EXPECT_EQ(network->classes(), 40);
}

TEST(ChainNetwork, ABranchIsNotAChainAndTheReasonNamesTheNode) {
  std::string whyNot;
  EXPECT_FALSE(matchChainNetwork(*testing::branchingModel(), &whyNot));
  EXPECT_NE(whyNot.find("residual"), std::string::npos) << whyNot;
  EXPECT_NE(whyNot.find("branches"), std::string::npos) << whyNot;
}

TEST(WholeNetworkPlan, TakesEveryNodeOfAChainInOneStage) {
  const auto model = loadOnnxModel(kModels + "/course-high.onnx");
  const Plan plan = makePlan(*model, kWholeNetwork, model->inputShapesFor(100));
  ASSERT_EQ(plan.stages.size(), 1u);
  EXPECT_TRUE(plan.stages[0].wholeNetwork);
  EXPECT_TRUE(plan.stages[0].hasConv);
  EXPECT_EQ(plan.stages[0].nodes.size(), model->nodes.size());
  EXPECT_EQ(plan.wholeNetworkDeclined, "");
  EXPECT_EQ(plan.fallbackCount(), 0);
  EXPECT_NE(plan.describe(*model)[0].find("the whole network in one kernel"), std::string::npos);
}

TEST(WholeNetworkPlan, FallsBackLayerByLayerSayingWhy) {
  // Capturing every layer (the feature maps) needs every layer's output.
  const auto course = loadOnnxModel(kModels + "/lenet5.onnx");
  const Plan captured = makePlan(*course, kWholeNetwork, course->inputShapesFor(1), /*fuse=*/false);
  EXPECT_NE(captured.wholeNetworkDeclined.find("every layer's output"), std::string::npos);
  int convStages = 0;
  for (const PlanStage& stage : captured.stages) {
    EXPECT_FALSE(stage.wholeNetwork);
    if (!stage.hasConv) continue;
    ++convStages;
    EXPECT_NE(stage.variant, kWholeNetwork);
    EXPECT_NE(stage.fallbackReason.find("every layer's output"), std::string::npos) << stage.fallbackReason;
  }
  EXPECT_EQ(convStages, 2);
  // A graph that branches runs layer by layer, and each conv stage says which node broke the chain.
  const auto branching = testing::branchingModel();
  const Plan plan = makePlan(*branching, kWholeNetwork, {{"x", {2, 1, 6, 6}}});
  EXPECT_GT(plan.stages.size(), 1u);
  EXPECT_NE(plan.wholeNetworkDeclined.find("residual"), std::string::npos) << plan.wholeNetworkDeclined;
  EXPECT_NE(plan.describe(*branching)[0].find("residual"), std::string::npos) << plan.describe(*branching)[0];
  ASSERT_TRUE(plan.stages[0].hasConv);
  EXPECT_NE(plan.stages[0].variant, kWholeNetwork);
}

}  // namespace
}  // namespace convscope
