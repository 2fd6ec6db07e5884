// What an installed turbanet offers besides its commands: `--version`, the shell completion
// scripts (loaded in real shells) and the man pages the build makes. The .deb packages are
// checked by scripts/test-package.sh (ctest package.deb).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/cpu_target.h"
#include "config/key_values.h"
#include "config/keys.h"
#include "turbanet_version.h"
#include "cli_test_util.h"
#include "python_test_util.h"

namespace fs = std::filesystem;
using tn::test::run_command;

namespace {

fs::path scratch(const std::string& name) { return tn::test::scratch_path("install", name); }

// The lines of `text`.
std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

bool has_shell(const std::string& shell) { return std::system(("command -v " + shell + " >/dev/null 2>&1").c_str()) == 0; }

// The script `turbanet completion <shell>` prints, in a file.
fs::path completion_script(const std::string& shell) {
  const fs::path p = scratch("completion." + shell);
  REQUIRE(std::system((std::string(TURBANET_BINARY) + " completion " + shell + " > " + p.string()).c_str()) == 0);
  return p;
}

// What bash's completion function offers for the command line `words` (the last one being
// completed), run in a real bash in directory `dir`, sorted.
std::vector<std::string> bash_complete(const std::vector<std::string>& words, const fs::path& dir = scratch("")) {
  static const fs::path script = completion_script("bash");
  std::string array;
  for (const std::string& w : words) array += " '" + w + "'";
  const std::string cmd = "cd " + dir.string() + " && bash --norc --noprofile -c 'source " + script.string() +
                          "; COMP_WORDS=(" + std::string() + "\"$@\"); COMP_CWORD=$(($# - 1)); _turbanet; "
                          "printf \"%s\\n\" \"${COMPREPLY[@]}\"' bash" + array + " 2>&1";
  std::vector<std::string> got = lines(run_command(cmd));
  got.erase(std::remove(got.begin(), got.end(), ""), got.end());
  std::sort(got.begin(), got.end());
  return got;
}

}  // namespace

TEST_CASE("--version names the version, the git commit, the CPU targets built in and CUDA support") {
  const auto [rc, out] = tn::test::run_binary_in(scratch(""), {"--version"});
  REQUIRE(rc == 0);
  const std::vector<std::string> l = lines(out);
  REQUIRE(l.size() == 4);
  CHECK(l[0] == "turbanet " TURBANET_VERSION);
  // The commit of the checkout the binary was built from; "unknown" outside git.
  std::string head = run_command("git -C " TURBANET_SOURCE_DIR " rev-parse --short=12 HEAD 2>/dev/null");
  head = head.empty() ? "unknown" : head.substr(0, head.size() - 1);
  CHECK_MESSAGE(l[1].rfind("commit " + head, 0) == 0, l[1]);  // (+ "-dirty" with uncommitted changes)
  std::string targets;
  for (tn::CpuTarget t : tn::compiled_cpu_targets()) targets += (targets.empty() ? "" : ", ") + std::string(to_string(t));
  CHECK_MESSAGE(l[2].rfind("CPU targets built in: " + targets + "; this CPU runs " +
                               to_string(tn::available_cpu_targets().front()), 0) == 0, l[2]);
#if defined(TURBANET_HAVE_CUDA)
  // Built: the module beside the build's binary is found; this machine may have no GPU.
  CHECK_MESSAGE(l[3].rfind("CUDA: built (toolkit ", 0) == 0, l[3]);
  CHECK_MESSAGE(l[3].find("module " + (fs::path(TURBANET_BINARY).parent_path() / "libturbanet_cuda.so").string()) !=
                    std::string::npos, l[3]);
#else
  CHECK(l[3] == "CUDA: not built (rebuild with -DTURBANET_CUDA=ON)");
#endif
}

TEST_CASE("the bash completion script completes commands, subcommands, flags, choices, --set keys and files") {
  if (!has_shell("bash")) {
    MESSAGE("SKIPPED: no bash on this machine");
    return;
  }
  using V = std::vector<std::string>;
  CHECK(bash_complete({"turbanet", "tr"}) == V{"train"});
  CHECK(bash_complete({"turbanet", "d"}) == V{"data", "devices"});
  CHECK(bash_complete({"turbanet", "data", "g"}) == V{"generate"});
  CHECK(bash_complete({"turbanet", "train", "c.yaml", "--sw"}) == V{"--swarm"});
  CHECK(bash_complete({"turbanet", "eval", "r.h5", "--split", ""}) == V{"all", "test", "train", "val"});
  CHECK(bash_complete({"turbanet", "completion", "z"}) == V{"zsh"});
  // A flag's value is skipped: the word after `--out x.h5` is the config again.
  const V keys = bash_complete({"turbanet", "train", "c.yaml", "--out", "x.h5", "--set", "optim"});
  CHECK(std::find(keys.begin(), keys.end(), "optimizer.lr=") != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "optimizer.momentum=") != keys.end());
  CHECK(std::all_of(keys.begin(), keys.end(), [](const std::string& k) { return k.rfind("optimizer", 0) == 0; }));
  CHECK(bash_complete({"turbanet", "data", "generate", "c.yaml", "--set", "data.source.se"}) ==
        V{"data.source.season_amplitude=", "data.source.season_period=", "data.source.seed=", "data.source.series="});
  // Files by extension (and directories): configs, run files, CSV input.
  const fs::path dir = scratch("files");
  fs::create_directories(dir / "configs");
  for (const char* f : {"a.yaml", "b.yml", "c.csv", "d.h5", "e.txt"}) tn::test::write_text(dir / f, "");
  CHECK(bash_complete({"turbanet", "train", ""}, dir) == V{"a.yaml", "b.yml", "configs"});
  CHECK(bash_complete({"turbanet", "eval", ""}, dir) == V{"configs", "d.h5"});
  CHECK(bash_complete({"turbanet", "predict", "d.h5", "--input", ""}, dir) == V{"a.yaml", "b.yml", "c.csv", "configs"});
  // After --set key=value (bash splits it at '=') the config still completes.
  CHECK(bash_complete({"turbanet", "train", "--set", "optimizer.lr", "=", "0.1", ""}, dir) == V{"a.yaml", "b.yml", "configs"});
  CHECK(bash_complete({"turbanet", "train", "--set", "optimizer.lr", "=", ""}, dir).empty());
  // The names an enumerated key takes, after '=' (bash's own word) or partly typed.
  CHECK(bash_complete({"turbanet", "train", "--set", "optimizer.type", "="}) == V{"adam", "adamw", "rmsprop", "sgd"});
  CHECK(bash_complete({"turbanet", "train", "--set", "optimizer.type", "=", "ad"}) == V{"adam", "adamw"});
}

TEST_CASE("--set completion offers the keys the config reader checks against") {
  const std::vector<std::string> paths = tn::cfg::key_paths();
  for (const char* key : {"optimizer.lr", "data.source.series", "model.layers.0.units", "train.early_stopping.patience",
                          "data.per_member.bootstrap.fraction", "search.rungs", "ensemble.k", "seed"})
    CHECK_MESSAGE(std::find(paths.begin(), paths.end(), key) != paths.end(), key);
  // The reader's message for an unknown key lists the table's keys (so the two are one list).
  const auto [rc, out] = tn::test::run_binary_in(
      scratch(""), {"train", TURBANET_SOURCE_DIR "/configs/spirals-small.yaml", "--set", "optimizer.bogus=1"});
  CHECK(rc == 2);
  std::string allowed;
  for (const tn::cfg::KeyRule& k : tn::cfg::section_keys("optimizer"))
    if (k.applies("adam")) allowed += (allowed.empty() ? "" : ", ") + k.key;
  CHECK_MESSAGE(out.find("unknown key; allowed: " + allowed) != std::string::npos, out);
}

TEST_CASE("the names completion offers for enumerated keys are the ones the config reader accepts") {
  const fs::path cfg = tn::test::write_text(
      scratch("enum.yaml"), "name: enum\nmodel:\n  layers:\n    - {units: 4, activation: relu}\n    - {units: 2}\n"
                             "data:\n  source: {type: spirals, n: 16}\n");
  const std::vector<std::pair<std::string, std::vector<std::string>>> values = tn::cfg::key_values();
  CHECK(values.size() >= 14);
  for (const auto& [key, names] : values) {
    CAPTURE(key);
    // The reader's list is in its message for a name it does not know.
    const auto [rc, out] =
        tn::test::run_binary_in(scratch(""), {"train", cfg.string(), "--set", key + "=not-a-name", "--out", "x.h5"});
    CHECK(rc == 2);
    std::string allowed;
    for (const std::string& n : names) allowed += (allowed.empty() ? "" : ", ") + n;
    CHECK_MESSAGE(out.find("unknown value 'not-a-name'; allowed: " + allowed) != std::string::npos, out);
  }
}

TEST_CASE("the zsh and fish completion scripts parse") {
  for (const char* shell : {"zsh", "fish"}) {
    CAPTURE(shell);
    if (!has_shell(shell)) {
      MESSAGE("SKIPPED: no " << shell << " on this machine (apt-get install " << shell << ")");
      continue;
    }
    const fs::path script = completion_script(shell);
    CHECK(run_command(std::string(shell) + " -n " + script.string() + " 2>&1; echo rc=$?") == "rc=0\n");
  }
  if (has_shell("zsh")) {  // and zsh's copy of the word parser finds what each word completes to
    const std::string got = run_command(
        "zsh -f -c 'compdef() { :; }; source " + completion_script("zsh").string() + "; setopt shwordsplit; "
        "_turbanet_parse; _turbanet_kind tr; echo $kind; _turbanet_parse data; _turbanet_kind g; echo $kind $subs; "
        "_turbanet_parse train c.yaml --out x.h5 --set; _turbanet_kind optim; echo $kind; "
        "_turbanet_parse eval r.h5 --split; _turbanet_kind \"\"; echo $kind; "
        "_turbanet_parse train; _turbanet_kind \"\"; echo $kind' 2>&1");
    CHECK(got == "subs\nsubs generate\n@keys\n=test,val,train,all\nyaml,yml\n");
  }
  if (has_shell("fish")) {  // and fish offers the commands from it
    const std::string got = run_command("fish --no-config -c 'source " + completion_script("fish").string() +
                                        "; complete -C \"turbanet tr\"' 2>&1");
    CHECK_MESSAGE(got.rfind("train\t", 0) == 0, got);
    // and, after --set, a key's names as bash and zsh offer them after the '='
    const std::string values = run_command("fish --no-config -c 'source " + completion_script("fish").string() +
                                           "; complete -C \"turbanet train c.yaml --set optimizer.type=s\"' 2>&1");
    CHECK_MESSAGE(values.find("optimizer.type=sgd") != std::string::npos, values);
    const std::string keys = run_command("fish --no-config -c 'source " + completion_script("fish").string() +
                                         "; complete -C \"turbanet train c.yaml --set optimizer.ty\"' 2>&1");
    CHECK_MESSAGE(keys.rfind("optimizer.type=", 0) == 0, keys);
  }
}

TEST_CASE("the man pages render without warnings and name every command") {
  const fs::path man = fs::path(TURBANET_BINARY).parent_path() / "man";
  if (!fs::exists(man / "turbanet.1")) {
    MESSAGE("SKIPPED: no man pages in " << man.string() << " (no help2man at configure time, or a sanitizer build)");
    return;
  }
  const std::string help = run_command(std::string(TURBANET_BINARY) + " --help");
  std::vector<std::string> commands;
  bool in = false;
  for (const std::string& l : lines(help)) {
    if (l == "Subcommands:") in = true;
    else if (in && l.size() > 2 && l[2] != ' ') commands.push_back(l.substr(2, l.find(' ', 2) - 2));
    else if (in) break;
  }
  REQUIRE(commands.size() >= 8);
  const std::string page = run_command("groff -man -Tutf8 -ww -rLL=400n -rHY=0 -P-cbou " + (man / "turbanet.1").string() + " 2>&1");
  for (const std::string& c : commands) {
    CAPTURE(c);
    CHECK(page.find("\n       " + c) != std::string::npos);          // in SUBCOMMANDS
    CHECK(page.find("turbanet-" + c + "(1)") != std::string::npos);  // in SEE ALSO
    CHECK(fs::exists(man / ("turbanet-" + c + ".1")));
  }
  for (const auto& f : fs::directory_iterator(man)) {
    CAPTURE(f.path().string());
    CHECK(run_command("groff -man -Tutf8 -ww -z " + f.path().string() + " 2>&1") == "");
  }
}
