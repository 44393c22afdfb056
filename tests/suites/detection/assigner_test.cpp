// The task-aligned assigner on hand-built cells.
#include <gtest/gtest.h>

#include "framework/core/error.h"
#include "suites/detection/train/assigner.h"

namespace skiff::detection {
namespace {

// A row of `n` cells at stride 10 along y = 5: centres (5, 5), (15, 5), ...
struct Row {
  std::vector<float> cx, cy;
  explicit Row(int n) {
    for (int i = 0; i < n; ++i) {
      cx.push_back(5.f + 10.f * float(i));
      cy.push_back(5.f);
    }
  }
};

TEST(TaskAlignedAssigner, TopkCellsInsideTheBoxWithNormalisedScores) {
  Row row(6);
  const int classes = 2;
  // Object of class 1 over cells 1..4 (x 10..50).
  GroundTruth truth{{Box{10, 0, 50, 10}}, {1}};
  std::vector<float> probs(6 * classes, 0.f);
  std::vector<Box> pred(6);
  for (int i = 0; i < 6; ++i) {
    probs[size_t(i * classes + 1)] = 0.5f;
    pred[size_t(i)] = Box{row.cx[size_t(i)] - 5, 0, row.cx[size_t(i)] + 5, 10};  // IoU 1/4 with the object
  }
  probs[3 * classes + 1] = 1.0f;                 // cell 3: best score -> metric 1 * (1/4)^6
  pred[2] = Box{10, 0, 50, 10};                  // cell 2: perfect box -> metric 0.5 * 1
  TaskAlignedOptions o;
  o.topk = 2;
  CellAssignment a = assign_task_aligned(probs, classes, pred, row.cx, row.cy, truth, o);
  // Cell 2 has the largest metric (0.5), cell 3 the next (2.4e-4); cells 0 and 5 lie outside.
  EXPECT_EQ(a.object, (std::vector<int>{-1, -1, 0, 0, -1, -1}));
  EXPECT_EQ(a.positives(), 2);
  // The best cell scores the best IoU (1); the other its metric scaled alike.
  EXPECT_FLOAT_EQ(a.score[2], 1.f);
  EXPECT_NEAR(a.score[3], (1.0 * std::pow(0.25, 6)) / 0.5, 1e-9);
  EXPECT_EQ(a.score[0], 0.f);
}

TEST(TaskAlignedAssigner, TiesGoToTheCellsNearestTheCentre) {
  Row row(7);
  GroundTruth truth{{Box{0, 0, 70, 10}}, {0}};  // centre x = 35: cell 3
  std::vector<float> probs(7, 0.f);              // every metric 0
  std::vector<Box> pred(7, Box{0, 0, 1, 1});
  TaskAlignedOptions o;
  o.topk = 3;
  CellAssignment a = assign_task_aligned(probs, 1, pred, row.cx, row.cy, truth, o);
  EXPECT_EQ(a.object, (std::vector<int>{-1, -1, 0, 0, 0, -1, -1}));
}

TEST(TaskAlignedAssigner, ACellClaimedTwiceLearnsTheObjectItOverlapsMost) {
  Row row(3);
  // Both objects cover all three cells; every predicted box equals object 1.
  GroundTruth truth{{Box{0, 0, 30, 10}, Box{0, 0, 20, 10}}, {0, 1}};
  std::vector<float> probs(3 * 2, 0.5f);
  std::vector<Box> pred(3, Box{0, 0, 20, 10});
  CellAssignment a = assign_task_aligned(probs, 2, pred, row.cx, row.cy, truth, {});
  // Cells 0 and 1 overlap object 1 fully (IoU 1, against 2/3 for object 0);
  // cell 2's centre (25) lies outside object 1, so only object 0 claims it.
  EXPECT_EQ(a.object, (std::vector<int>{1, 1, 0}));
  // Alone, object 0 takes all three.
  CellAssignment b = assign_task_aligned(probs, 2, pred, row.cx, row.cy, GroundTruth{{truth.boxes[0]}, {0}}, {});
  EXPECT_EQ(b.object, (std::vector<int>{0, 0, 0}));
}

TEST(TaskAlignedAssigner, NoObjectsAndBadInput) {
  Row row(2);
  std::vector<float> probs(2, 0.5f);
  std::vector<Box> pred(2, Box{0, 0, 10, 10});
  CellAssignment empty = assign_task_aligned(probs, 1, pred, row.cx, row.cy, GroundTruth{}, {});
  EXPECT_EQ(empty.positives(), 0);
  EXPECT_EQ(empty.score, (std::vector<float>{0.f, 0.f}));
  EXPECT_THROW(assign_task_aligned(probs, 1, pred, row.cx, row.cy, GroundTruth{{Box{0, 0, 10, 10}}, {3}}, {}),
               ValueError);
  EXPECT_THROW(assign_task_aligned(probs, 2, pred, row.cx, row.cy, GroundTruth{}, {}), ValueError);
}

}  // namespace
}  // namespace skiff::detection
