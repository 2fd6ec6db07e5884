// Learning-rate schedules: the factor applied to the base learning rate at optimizer step t
// (0-based), shared by host and device code.
#pragma once
#include <cmath>

#include "config/config.h"
#include "math/host_device.h"

namespace tn {

struct LrSchedule {
  ScheduleType type = ScheduleType::Constant;
  double warmup_steps = 0;  // linear warm-up over the first warmup_steps steps
  double step_every = 0;    // step: decay every step_every steps
  double gamma = 0.1;
  double min_ratio = 0;     // min_lr / lr for cosine and linear
  double total_steps = 1;

  // lr(t) = base · factor(t). During warm-up factor = (t+1)/warmup_steps. After it:
  // constant 1; step γ^⌊t/step_every⌋; cosine r + (1−r)·½(1+cos πp); linear 1 − (1−r)·p,
  // with p = (t − warmup)/(total − warmup) the progress after warm-up and r = min_lr/lr.
  TN_HD double factor(double t) const {
    if (t < warmup_steps) return (t + 1.0) / warmup_steps;
    const double span = total_steps - warmup_steps;
    const double p = span > 0 ? (t - warmup_steps) / span : 1.0;
    switch (type) {
      case ScheduleType::Step: return pow(gamma, floor(t / step_every));
      case ScheduleType::Cosine: return min_ratio + (1.0 - min_ratio) * 0.5 * (1.0 + cos(3.14159265358979323846 * p));
      case ScheduleType::Linear: return 1.0 - (1.0 - min_ratio) * p;
      case ScheduleType::Constant: break;
    }
    return 1.0;
  }
};

inline LrSchedule make_schedule(const ScheduleConfig& s, double base_lr, long steps_per_epoch,
                                int epochs) {
  LrSchedule r;
  r.type = s.type;
  r.warmup_steps = s.warmup_epochs * steps_per_epoch;
  r.step_every = static_cast<double>(s.step_every) * steps_per_epoch;
  r.gamma = s.gamma;
  r.min_ratio = s.min_lr / base_lr;
  r.total_steps = static_cast<double>(steps_per_epoch) * epochs;
  return r;
}

}  // namespace tn
