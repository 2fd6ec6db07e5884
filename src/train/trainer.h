// Training, written once against the Backend interface: the types (train/train_output.h),
// the entry points (train/train_swarm.h) and the host memory estimate
// (train/host_memory_estimate.h).
#pragma once
#include "train/host_memory_estimate.h"
#include "train/train_output.h"
#include "train/train_swarm.h"
