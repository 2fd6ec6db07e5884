// The per-member training state moved between a sub-swarm and the whole swarm
// (train/member_state.h), and halving's one cut (train/search_steps.h halving_round).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "train/member_state.h"
#include "train/search_steps.h"

namespace {

// A swarm of S members with distinct values in every per-member field; histories [S, E].
tn::TrainOutput numbered_swarm(int S, int E) {
  tn::TrainOutput t;
  t.epochs = E;
  t.steps_per_epoch = 7;
  for (auto h : tn::train_detail::kHistories)
    for (int i = 0; i < S * E; ++i) (t.*h).push_back(static_cast<float>(i) + 0.25f * static_cast<float>(h == &tn::TrainOutput::val_loss));
  for (int s = 0; s < S; ++s) {
    t.diverged_epoch.push_back(s % 3 == 0 ? -1 : s);
    t.stopped_epoch.push_back(s % 2 ? -1 : s + 1);
    t.best_epoch.push_back(s);
    t.best_value.push_back(0.5 * s);
    t.search_rung.push_back(s % 4);
  }
  return t;
}

}  // namespace

TEST_CASE("member state: members gathered into a sub-swarm and scattered back leave the whole swarm as it was") {
  const tn::TrainOutput whole = numbered_swarm(6, 3);
  const std::vector<int> members = {4, 1, 5};
  const tn::TrainOutput part = tn::train_detail::gather_members(whole, members, 3);
  REQUIRE(part.train_loss.size() == 9);
  CHECK(part.train_loss[0] == whole.train_loss[4 * 3]);  // row 0 of the part is member 4
  CHECK(part.diverged_epoch == std::vector<int>{4, 1, 5});
  CHECK(part.best_value == std::vector<double>{2.0, 0.5, 2.5});
  CHECK(part.steps_per_epoch == 7);
  tn::TrainOutput back = numbered_swarm(6, 3);
  for (auto h : tn::train_detail::kHistories) std::fill((back.*h).begin(), (back.*h).end(), -1.0f);
  for (int m : members) back.diverged_epoch[m] = back.stopped_epoch[m] = back.best_epoch[m] = back.search_rung[m] = 99;
  tn::train_detail::scatter_members(back, part, members);
  for (int m : members)
    for (int e = 0; e < 3; ++e) CHECK(back.val_loss[m * 3 + e] == whole.val_loss[m * 3 + e]);
  CHECK(back.diverged_epoch == whole.diverged_epoch);
  CHECK(back.stopped_epoch == whole.stopped_epoch);
  CHECK(back.best_epoch == whole.best_epoch);
  CHECK(back.search_rung == whole.search_rung);
  CHECK(back.train_loss[0] == -1.0f);  // member 0 was not in the part: untouched
}

TEST_CASE("member state: a part trained fewer epochs fills only its epochs of the whole swarm's rows") {
  tn::TrainOutput whole = numbered_swarm(2, 4);
  tn::TrainOutput part = tn::train_detail::gather_members(whole, {1}, 2);
  for (float& v : part.train_loss) v = 100;
  tn::train_detail::scatter_members(whole, part, {1});
  CHECK(whole.train_loss[4] == 100);
  CHECK(whole.train_loss[5] == 100);
  CHECK(whole.train_loss[6] == 6);  // epoch 3 of member 1: past the part's epochs
}

TEST_CASE("halving round: the members still training keep the best ceil(keep n), the others stop at the rung") {
  tn::Config cfg;
  cfg.swarm.size = 5;
  cfg.search.type = tn::SearchConfig::Type::Halving;
  cfg.search.metric = "val_loss";
  cfg.search.keep = 0.5;
  tn::TrainOutput out;
  out.epochs = 2;
  // val_loss [5, 2]: after epoch 2 members rank 3 < 0 < 4 < 1; member 2 diverged earlier.
  out.val_loss = {9, 0.2f, 9, 0.9f, 9, 0.5f, 9, 0.1f, 9, 0.3f};
  out.diverged_epoch = {-1, -1, 1, -1, -1};
  out.stopped_epoch.assign(5, -1);
  out.search_rung.assign(5, 0);
  const std::vector<int> cut = tn::train_detail::halving_round(cfg, out, 2);
  CHECK(cut == std::vector<int>{1, 4});  // of 4 training, the best 2 (3 and 0) keep training
  CHECK(out.search_epochs == std::vector<int>{2});
  CHECK(out.stopped_epoch == std::vector<int>{-1, 2, -1, -1, 2});
  CHECK(out.search_rung == std::vector<int>{0, 1, 0, 0, 1});
}

TEST_CASE("member state: the whole swarm is sized for its parts, with only the arrays some part has") {
  tn::TrainOutput a, b;
  a.val_loss = {1, 2};
  b.best_value = {0.5};
  tn::TrainOutput whole;
  tn::train_detail::size_member_state(whole, 3, 2, {&a, &b});
  CHECK(whole.train_loss.size() == 6);  // always
  CHECK(std::isnan(whole.train_loss[5]));
  CHECK(whole.val_loss.size() == 6);
  CHECK(whole.train_acc.empty());
  CHECK(whole.diverged_epoch == std::vector<int>{-1, -1, -1});
  CHECK(whole.stopped_epoch.empty());
  CHECK(whole.best_epoch == std::vector<int>{0, 0, 0});
}
