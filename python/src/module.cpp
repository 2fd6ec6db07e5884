// turbaswarm._core: the Python extension over the C++ core, no subprocess. train() reads the
// config through the project's config reader and runs the training service the CLI runs
// (run/train_run.h); Swarm is a run file loaded as `turbanet predict` loads it
// (run/stored_swarm.h; its forward pass run/stored_predict.h). The errors are the core's, as
// Python exceptions; the Python package (python/turbaswarm/) builds the user-facing API on these.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "backend/backend.h"
#include "config/config.h"
#include "convert.h"
#include "data/prepare.h"
#include "io/run_file.h"
#include "run/errors.h"
#include "run/stored_predict.h"
#include "run/stored_swarm.h"
#include "run/train_run.h"
#include "turbanet_version.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace tn::py {
namespace {

// The resolved config: `config` a path (str) or a dict; `overrides` (key, value) pairs.
// `fixed` are applied after them (the data source of arrays).
Config read_config(nb::handle config, const std::vector<std::pair<std::string, nb::object>>& overrides,
                   const std::vector<Override>& fixed) {
  std::vector<Override> ov;
  for (const auto& [key, value] : overrides) ov.push_back({key, yaml_text(value, key, /*flow=*/true)});
  ov.insert(ov.end(), fixed.begin(), fixed.end());
  if (nb::isinstance<nb::str>(config)) return load_config(nb::cast<std::string>(config), ov);
  if (!nb::isinstance<nb::dict>(config))
    throw ConfigError("config: a path to a YAML file or a dict, not " + nb::cast<std::string>(nb::repr(config.type())));
  // Relative data paths are looked up in the working directory, as a config file's first place.
  return parse_config(yaml_text(config, "", /*flow=*/false), "config dict", ov, std::vector<std::string>{""});
}

// What the Python side needs after training.
struct Trained {
  std::string path, checkpoint;
  bool interrupted = false;
  int epochs = 0;
  std::vector<int> diverged;
};

// Trains as `turbanet train` does and writes the run file to the config's output.path. The GIL
// is released while it trains; `progress(dict)` is called with it after every epoch, and so is
// PyErr_CheckSignals: Ctrl-C (or an exception in `progress`) stops training after that epoch,
// the checkpoint and the run file (marked interrupted) are written, and then the exception is
// raised, its message naming them.
Trained train(nb::object config, const std::vector<std::pair<std::string, nb::object>>& overrides,
              std::optional<FloatArray> X, std::optional<FloatArray> y, nb::object progress, int threads, bool force,
              const std::string& resume) {
  const auto started = std::chrono::steady_clock::now();
  if (X.has_value() != y.has_value()) throw ConfigError("X and y: give both (the training data) or neither");
  std::optional<SourceArrays> arrays;
  std::vector<Override> fixed;
  if (X) {
    fixed.push_back({"data.source", "{type: arrays}"});
    arrays = SourceArrays{numeric_array(*X, "X"), numeric_array(*y, "y"), std::nullopt, std::nullopt};
  }
  Config cfg = read_config(config, overrides, fixed);
  std::optional<nb::python_error> raised;  // by Ctrl-C or the progress callback
  std::atomic<bool> stop{false};
  const auto report = [&](const EpochStats& st) {
    nb::gil_scoped_acquire gil;
    if (raised) return;
    try {
      if (PyErr_CheckSignals() != 0) throw nb::python_error();
      if (!progress.is_none()) {
        const auto optional = [](double v) { return v < 0 ? nb::object(nb::none()) : nb::object(nb::float_(v)); };
        nb::dict d;
        d["epoch"] = st.epoch;
        d["epochs"] = st.epochs;
        d["loss_mean"] = st.loss_mean;
        d["loss_min"] = st.loss_min;
        d["loss_max"] = st.loss_max;
        d["accuracy_mean"] = optional(st.acc_mean);
        d["val_loss_mean"] = optional(st.val_loss_mean);
        d["diverged"] = st.diverged;
        d["training"] = st.training;
        d["seconds"] = st.seconds;
        progress(d);
      }
    } catch (nb::python_error& e) {
      raised.emplace(std::move(e));
      stop = true;
    }
  };
  Trained t;
  {
    nb::gil_scoped_release nogil;
    TrainingRun run(std::move(cfg), threads, force, started, resume, {}, {}, arrays ? &*arrays : nullptr);
    const TrainResult r = run.run({report, {}, {}, [&] { return stop.load(std::memory_order_relaxed); }});
    t.path = run.config().output.path;
    t.checkpoint = r.checkpoint;
    t.interrupted = r.out.interrupted;
    t.epochs = r.out.epochs;
    t.diverged = r.diverged;
  }
  if (raised) {
    // Ctrl-C: a KeyboardInterrupt saying what was kept; an error of the callback as it was.
    if (t.interrupted && raised->matches(PyExc_KeyboardInterrupt)) {
      const std::string& resume_from = t.checkpoint.empty() ? t.path : t.checkpoint;
      raised.reset();
      PyErr_SetString(PyExc_KeyboardInterrupt,
                      ("stopped after epoch " + std::to_string(t.epochs) + "; wrote " + t.path + " (marked interrupted)" +
                       (t.checkpoint.empty() ? "" : " and the checkpoint " + t.checkpoint) +
                       "; continue with train(..., resume='" + resume_from + "')").c_str());
      throw nb::python_error();
    }
    throw std::move(*raised);
  }
  return t;
}

// A run file loaded for prediction and inspection (run/stored_swarm.h: load_swarm_model).
struct Swarm {
  StoredSwarm run;

  // Every member's outputs on X [n, F] (raw features, normalized here with the stored
  // statistics): [S, n, O] probabilities (classification) or values in the target's units.
  NumpyArray predict(const FloatArray& X, int threads) const {
    if (run.file.data.seq_len > 0 || one_member_per_group(run))
      throw UsageError("run file '" + run.path + "': a sequence or group_by run predicts from its series or groups; use "
                       "turbanet predict with a CSV");
    if (!run.encoding.empty())
      throw UsageError("run file '" + run.path + "': its CSV columns were encoded (categories, fills); predict from a "
                       "CSV with turbanet predict");
    const int F = run.shape.inputs();
    const std::size_t n = X.ndim() == 1 ? (F == 1 ? X.shape(0) : 1) : X.shape(0);
    const std::size_t cols = X.ndim() == 1 ? (F == 1 ? 1 : X.shape(0)) : X.ndim() == 2 ? X.shape(1) : 0;
    if (X.ndim() > 2 || static_cast<int>(cols) != F)
      throw DataError("X: shape " + shape_of(X) + ", but the model takes " + std::to_string(F) + " features per row");
    // Every forward pass takes a whole batch (the last one padded with zero rows, whose outputs
    // are dropped): the kernels then do the same arithmetic for a row whatever else is predicted
    // with it, so a row's prediction does not depend on the rows around it.
    Inputs in;
    in.split = "data";
    in.batch = std::max(1, run.cfg.train.batch_size);
    const std::size_t batch = static_cast<std::size_t>(in.batch), padded = (n + batch - 1) / batch * batch;
    in.n = static_cast<int>(padded);
    in.X.assign(padded * static_cast<std::size_t>(F), 0.0f);
    std::copy(X.data(), X.data() + X.size(), in.X.begin());
    apply_normalization(in.X, F, run.file.normalization.mean.data, run.file.normalization.std.data);
    SwarmPredictions p;
    {
      nb::gil_scoped_release nogil;
      p = run_swarm(run, in, threads);
    }
    const std::size_t S = static_cast<std::size_t>(p.S), O = static_cast<std::size_t>(p.O);
    std::vector<float> out(S * n * O);
    for (std::size_t s = 0; s < S; ++s)
      std::copy_n(p.outputs.begin() + static_cast<std::ptrdiff_t>(s * padded * O), n * O,
                  out.begin() + static_cast<std::ptrdiff_t>(s * n * O));
    return to_numpy(std::move(out), {S, n, O});
  }

  static std::string shape_of(const FloatArray& X) {
    std::string s = "(";
    for (std::size_t d = 0; d < X.ndim(); ++d) s += (d ? ", " : "") + std::to_string(X.shape(d));
    return s + (X.ndim() == 1 ? ",)" : ")");
  }

  // /history: train_loss [S, E] and, when stored, val_loss, train_accuracy, val_accuracy.
  nb::dict history() const {
    nb::dict h;
    const RunFile& f = run.file;
    for (const auto& [name, a] : {std::pair{"train_loss", &f.train_loss}, {"val_loss", &f.val_loss},
                                   {"train_accuracy", &f.train_accuracy}, {"val_accuracy", &f.val_accuracy}})
      if (!a->data.empty()) h[name] = to_numpy(*a);
    return h;
  }

  // Member `member`'s (global index) parameters: one dict of tensors per layer, without the
  // member axis.
  nb::list params(int member) const {
    const int s = member - run.first_member;
    if (s < 0 || s >= run.S)
      throw UsageError("member " + std::to_string(member) + ": the run has members " + std::to_string(run.first_member) +
                       " to " + std::to_string(run.first_member + run.S - 1));
    const std::vector<LayerParams>* layers = &run.file.params;
    int row = s;
    for (const ArchitectureParams& a : run.file.architectures)
      for (std::size_t i = 0; i < a.members.size(); ++i)
        if (a.members[i] == member) layers = &a.params, row = static_cast<int>(i);
    nb::list out;
    for (const LayerParams& layer : *layers) {
      nb::dict d;
      for (const auto& [name, a] : layer.tensors) {
        const std::size_t per = a.data.size() / a.shape[0];
        std::vector<float> v(a.data.begin() + static_cast<std::ptrdiff_t>(per * row),
                             a.data.begin() + static_cast<std::ptrdiff_t>(per * (row + 1)));
        d[name.c_str()] = to_numpy(std::move(v), std::vector<std::size_t>(a.shape.begin() + 1, a.shape.end()));
      }
      out.append(d);
    }
    return out;
  }

  // /members/hparams: each per-member key's value of every member (numbers, or text).
  nb::dict hparams() const {
    nb::dict d;
    for (const auto& [key, values] : run.file.members.hparams) d[key.c_str()] = nb::cast(values);
    for (const auto& [key, values] : run.file.members.hparam_text) d[key.c_str()] = nb::cast(values);
    return d;
  }
};

}  // namespace
}  // namespace tn::py

NB_MODULE(_core, m) {
  using namespace tn;
  using namespace tn::py;
  m.doc() = "turbanet's C++ core: training and run files (use the turbaswarm package)";
  m.attr("__version__") = TURBANET_VERSION;
  // The core logs what the command line prints (progress, summaries) at info; in a notebook only
  // warnings and errors show unless asked for (turbaswarm.set_log_level("info")).
  spdlog::set_level(spdlog::level::warn);
  m.def("set_log_level", [](const std::string& level) {
    const spdlog::level::level_enum l = spdlog::level::from_str(level);
    if (l == spdlog::level::off && level != "off")
      throw UsageError("log level '" + level + "': one of trace, debug, info, warning, error, critical, off");
    spdlog::set_level(l);
  }, "level"_a);
  // The core's errors: bad input is a ValueError, an unreadable or unwritable file an OSError.
  nb::exception<ConfigError>(m, "ConfigError", PyExc_ValueError);
  nb::exception<DataError>(m, "DataError", PyExc_ValueError);
  nb::exception<UsageError>(m, "UsageError", PyExc_ValueError);
  nb::exception<BackendError>(m, "BackendError", PyExc_RuntimeError);
  nb::exception<RunFileError>(m, "RunFileError", PyExc_OSError);

  nb::class_<Trained>(m, "Trained")
      .def_ro("path", &Trained::path)
      .def_ro("checkpoint", &Trained::checkpoint)
      .def_ro("interrupted", &Trained::interrupted)
      .def_ro("epochs", &Trained::epochs)
      .def_ro("diverged", &Trained::diverged);
  m.def("train", &train, "config"_a, "overrides"_a, "X"_a.none(), "y"_a.none(), "progress"_a.none(), "threads"_a,
        "force"_a, "resume"_a);

  nb::class_<Swarm>(m, "Swarm")
      .def_static("load", [](const std::string& path) {
        Swarm s;
        s.run = load_swarm_model(path);
        return s;
      }, "path"_a)
      .def("predict", &Swarm::predict, "X"_a, "threads"_a)
      .def("history", &Swarm::history)
      .def("params", &Swarm::params, "member"_a)
      .def("hparams", &Swarm::hparams)
      .def_prop_ro("path", [](const Swarm& s) { return s.run.path; })
      .def_prop_ro("config_yaml", [](const Swarm& s) { return s.run.file.config_yaml; })
      .def_prop_ro("size", [](const Swarm& s) { return s.run.S; })
      .def_prop_ro("first_member", [](const Swarm& s) { return s.run.first_member; })
      .def_prop_ro("classification", [](const Swarm& s) { return s.run.classification; })
      .def_prop_ro("class_names", [](const Swarm& s) { return s.run.class_names; })
      .def_prop_ro("feature_names", [](const Swarm& s) { return s.run.file.data.feature_names; })
      .def_prop_ro("interrupted", [](const Swarm& s) { return s.run.file.meta.interrupted; })
      .def_prop_ro("epochs", [](const Swarm& s) { return s.run.file.meta.epochs; })
      .def_prop_ro("diverged_epoch", [](const Swarm& s) { return s.run.file.diverged_epoch; })
      .def_prop_ro("ensemble_members", [](const Swarm& s) { return s.run.file.ensemble.member; })
      .def_prop_ro("ensemble_weights", [](const Swarm& s) { return s.run.file.ensemble.weight; });
}
