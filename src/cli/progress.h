// Training progress for people: a log line every `log_every` epochs and, when stderr is a
// terminal, a live progress bar in between.
#pragma once
#include "train/trainer.h"

namespace tn {

class Progress {
 public:
  Progress(int epochs, int log_every, bool quiet);
  void operator()(const EpochStats& st);
  void finish();

 private:
  int epochs_, log_every_;
  bool quiet_, live_;
  bool bar_shown_ = false;
  double last_bar_ = -1.0;  // seconds; the bar is redrawn at most 10 times a second
};

}  // namespace tn
