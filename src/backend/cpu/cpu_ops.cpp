// One CpuOps table per SIMD target (the ops themselves are in ops/), and the choice of the
// table at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "backend/cpu/cpu_ops.cpp"
#include <hwy/foreach_target.h>  // must come before highway.h
#include <hwy/highway.h>

#include "backend/cpu/cpu_ops.h"
#include "backend/cpu/ops/decl-inl.h"
#include "backend/cpu/target-inl.h"

HWY_BEFORE_NAMESPACE();
namespace tn {
namespace HWY_NAMESPACE {

const CpuOps kCpuOps{kTarget,
                     &ops::gemm,
                     &ops::bias_activation,
                     &ops::activation_backward,
                     &ops::bias_grad,
                     &ops::loss,
                     &ops::output_transform,
                     &ops::sum_squares,
                     &ops::optimizer_update,
                     &ops::lstm_forward,
                     &ops::lstm_backward,
                     &ops::gru_forward,
                     &ops::gru_backward};

}  // namespace HWY_NAMESPACE
}  // namespace tn
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include "backend/cpu/target_cases.h"

namespace tn {

const CpuOps& cpu_ops(CpuTarget t) {
  switch (t) {
    TN_TARGET_CASES(kCpuOps)
    default: break;
  }
  target_not_compiled(t);
}

}  // namespace tn
#endif  // HWY_ONCE
