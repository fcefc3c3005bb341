// A layer split as the frameworks that run it spell it: torchtitan's per-stage module lists and
// Megatron-LM's pipeline layout string.
#pragma once

#include <string>
#include <vector>


namespace zb::models {

// torchtitan's --parallelism.module_fqns_per_model_part: one list per stage in model order (the
// schedule's stage-to-rank style places them), the embedding "tok_embeddings" first, "layers.K"
// in order, the final "norm" and "output" last, as JSON:
// [["tok_embeddings","layers.0"],["layers.1","norm","output"]].
std::string torchtitan_module_fqns(const std::vector<int>& layers);

// Megatron-LM's --pipeline-model-parallel-layout: stages in model order separated by '|', "E"
// the embedding, "t" a transformer layer ("t*5" for five), "L" the loss with the output layer:
// "Et*3|t*4|t*3L". Megatron gives virtual stage i to rank i mod p, so the layout describes linear
// and interleaved placements only: the caller does not ask it of a V (mirrored) one.
std::string megatron_layout(const std::vector<int>& layers);

}  // namespace zb::models
