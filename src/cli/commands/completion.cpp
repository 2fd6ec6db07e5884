// `turbanet completion bash|zsh|fish`: a completion script made from the command line itself
// (the CLI11 app walked at run time) and the config key table (config/keys.h), so it offers
// exactly the commands, flags and keys this binary accepts.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/commands/commands.h"
#include "config/key_values.h"
#include "config/keys.h"

namespace tn {

namespace {

// What an option's value or a positional completes to: "@keys" (config keys for --set),
// "=a,b" (one of these names), "*" (any file), "yaml,yml" (files with these extensions and
// directories) or "-" (nothing: a number or free text).
struct Arg {
  std::vector<std::string> names;  // "-q", "--quiet"; empty for a positional
  std::string kind;
  std::string help;
  bool value = false;              // takes a value (not a flag)
};

struct Command {
  std::string path;  // "" (turbanet itself), "train", "data generate"
  std::string help;
  std::vector<const CLI::App*> subs;
  std::vector<Arg> options, positionals;
  bool last_repeats = false;  // the last positional takes any number of words (merge's parts)
};

// The files an argument names, by its name (the names are the command line's own; an
// argument not listed completes to nothing, or to its choices).
std::string file_kind(const std::string& name) {
  if (name == "config") return "yaml,yml";
  if (name == "run" || name == "parts" || name == "out" || name == "--resume") return "h5";
  if (name == "--input") return "csv,yaml,yml";
  if (name == "--data") return "yaml,yml,csv";
  if (name == "--trials") return "csv,json";
  if (name == "--out" || name == "--trials-out" || name == "--tensorboard") return "*";
  return "-";
}

std::string kind_of(const CLI::Option* o, const std::string& name) {
  if (name == "--set") return "@keys";
  const std::string type = o->get_type_name();  // "TEXT:{test,val,train,all}" for a choice
  if (const std::size_t open = type.find(":{"); open != std::string::npos && type.back() == '}')
    return "=" + type.substr(open + 2, type.size() - open - 3);
  return file_kind(name);
}

void walk(const CLI::App* app, const std::string& path, std::vector<Command>& out) {
  Command c;
  c.path = path;
  c.help = app->get_description();
  c.subs = app->get_subcommands([](const CLI::App*) { return true; });
  for (const CLI::Option* o : app->get_options()) {
    Arg a;
    a.help = o->get_description();
    if (o->get_positional() && o->get_lnames().empty() && o->get_snames().empty()) {
      a.kind = kind_of(o, o->get_name(true));
      c.last_repeats = o->get_items_expected_max() > 1;
      c.positionals.push_back(a);
      continue;
    }
    for (const std::string& s : o->get_snames()) a.names.push_back("-" + s);
    for (const std::string& l : o->get_lnames()) a.names.push_back("--" + l);
    a.value = o->get_expected_max() != 0;  // (a flag expects no value)
    a.kind = a.value ? kind_of(o, "--" + (o->get_lnames().empty() ? std::string() : o->get_lnames().front())) : "-";
    c.options.push_back(a);
  }
  out.push_back(c);
  for (const CLI::App* s : c.subs) walk(s, path.empty() ? s->get_name() : path + " " + s->get_name(), out);
}

std::string joined(const std::vector<std::string>& words, const std::string& sep = " ") {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : sep) + w;
  return s;
}

std::string keys_list() { return joined(cfg::key_paths()); }

// One line of help text, quoted for a shell's single quotes.
std::string quoted(std::string text) {
  if (const std::size_t nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
  std::string q = "'";
  for (char ch : text) q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return q + "'";
}

// The part bash and zsh share: _turbanet_spec CMD sets subs, flags, vopts ("--name:kind ..."),
// pos (the positionals' kinds) and posmulti; _turbanet_parse WORDS... (the words before the
// one completed) sets cmd, npos and pending (the option whose value is completed, or "").
std::string shared_functions(const std::vector<Command>& cmds) {
  std::string s = "_turbanet_keys='" + keys_list() + "'\n\n_turbanet_spec() {\n  case \"$1\" in\n";
  for (const Command& c : cmds) {
    std::vector<std::string> subs, flags, vopts, pos;
    for (const CLI::App* a : c.subs) subs.push_back(a->get_name());
    for (const Arg& a : c.options)
      for (const std::string& n : a.names) (a.value ? vopts : flags).push_back(a.value ? n + ":" + a.kind : n);
    for (const Arg& a : c.positionals) pos.push_back(a.kind);
    s += "    \"" + c.path + "\") subs='" + joined(subs) + "'; flags='" + joined(flags) + "'; vopts='" + joined(vopts) +
         "'; pos='" + joined(pos) + "'; posmulti=" + (c.last_repeats ? "1" : "0") + " ;;\n";
  }
  s += "    *) subs=''; flags=''; vopts=''; pos=''; posmulti=0 ;;\n  esac\n}\n\n";
  s += "# The names config key $1 takes (--set KEY=NAME), in $values.\n_turbanet_values() {\n  case \"$1\" in\n";
  for (const auto& [key, names] : cfg::key_values()) s += "    \"" + key + "\") values='" + joined(names) + "' ;;\n";
  s += "    *) values='' ;;\n  esac\n}\n\n";
  s += R"SH(_turbanet_parse() {
  cmd=''; npos=0; pending=''
  local w e sub
  for w in "$@"; do
    if [ -n "$pending" ]; then pending=''; continue; fi
    # bash splits --set key=value at '=': the value that follows is no positional.
    if [ "$w" = '=' ]; then pending='='; continue; fi
    _turbanet_spec "$cmd"
    case "$w" in
      -*=*) continue ;;
      -*) for e in $vopts; do [ "${e%%:*}" = "$w" ] && pending=$w; done; continue ;;
    esac
    for sub in $subs; do
      if [ "$sub" = "$w" ]; then cmd="${cmd:+$cmd }$w"; npos=-1; break; fi
    done
    npos=$((npos + 1))
  done
  _turbanet_spec "$cmd"
}

# The kind of what the current word completes to (see _turbanet_spec), in $kind; for
# kind=flags the flags in $flagwords.
_turbanet_kind() {
  local cur=$1 e
  kind=''
  flagwords=$flags
  for e in $vopts; do flagwords="$flagwords ${e%%:*}"; done
  if [ -n "$pending" ]; then
    for e in $vopts; do [ "${e%%:*}" = "$pending" ] && kind=${e#*:}; done
    return
  fi
  case "$cur" in -*) kind='flags'; return ;; esac
  if [ -n "$subs" ] && [ "$npos" -eq 0 ]; then kind='subs'; return; fi
  set -- $pos
  if [ "$npos" -lt $# ]; then shift "$npos"; kind=$1
  elif [ "$posmulti" = 1 ] && [ $# -gt 0 ]; then eval "kind=\${$#}"
  fi
}
)SH";
  return s;
}

std::string bash_script(const std::vector<Command>& cmds) {
  return "# bash completion for turbanet: commands, flags, config keys for --set, files by extension.\n"
         "# Printed by `turbanet completion bash`; load it with  source <(turbanet completion bash)\n"
         "# or install it as share/bash-completion/completions/turbanet (docs/install.md).\n\n" +
         shared_functions(cmds) + R"SH(
_turbanet() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
  local cmd npos pending subs flags vopts pos posmulti kind flagwords ext values
  local IFS=$' \t\n'
  COMPREPLY=()
  # --set key=value: bash splits the word at '='; after it, the key's names if it has some.
  local key=''
  if [ "$cur" = '=' ]; then key=$prev; cur=''; elif [ "$prev" = '=' ]; then key=${COMP_WORDS[COMP_CWORD-2]}; fi
  if [ -n "$key" ]; then
    _turbanet_values "$key"
    COMPREPLY=($(compgen -W "$values" -- "$cur"))
    return 0
  fi
  _turbanet_parse "${COMP_WORDS[@]:1:COMP_CWORD-1}"
  _turbanet_kind "$cur"
  case "$kind" in
    subs) COMPREPLY=($(compgen -W "$subs" -- "$cur")) ;;
    flags) COMPREPLY=($(compgen -W "$flagwords" -- "$cur")) ;;
    @keys)
      COMPREPLY=($(compgen -W "$_turbanet_keys" -S '=' -- "$cur"))
      compopt -o nospace 2>/dev/null ;;
    =*) COMPREPLY=($(compgen -W "${kind//[=,]/ }" -- "$cur")) ;;
    '*') COMPREPLY=($(compgen -f -- "$cur")); compopt -o filenames 2>/dev/null ;;
    -|'') ;;
    *)
      local IFS=$'\n'
      COMPREPLY=($(compgen -d -- "$cur"))
      for ext in ${kind//,/$'\n'}; do COMPREPLY+=($(compgen -f -X "!*.$ext" -- "$cur")); done
      compopt -o filenames 2>/dev/null ;;
  esac
  return 0
}
complete -F _turbanet turbanet
)SH";
}

std::string zsh_script(const std::vector<Command>& cmds) {
  return "#compdef turbanet\n"
         "# zsh completion for turbanet: commands, flags, config keys for --set, files by extension.\n"
         "# Printed by `turbanet completion zsh`; install it as _turbanet in a directory of $fpath\n"
         "# (share/zsh/vendor-completions), or load it with  source <(turbanet completion zsh)\n\n" +
         shared_functions(cmds) + R"SH(
_turbanet() {
  local cmd npos pending subs flags vopts pos posmulti kind flagwords values
  setopt localoptions shwordsplit
  _turbanet_parse "${(@)words[2,CURRENT-1]}"
  _turbanet_kind "${words[CURRENT]}"
  case "$kind" in
    subs) compadd -- ${=subs} ;;
    flags) compadd -- ${=flagwords} ;;
    @keys)
      if [[ ${words[CURRENT]} == *=* ]]; then  # --set KEY=: the key's names
        _turbanet_values "${words[CURRENT]%%=*}"; compset -P '*='; compadd -- ${=values}
      else
        compadd -S '=' -- ${=_turbanet_keys}
      fi ;;
    =*) compadd -- ${(s:,:)${kind#=}} ;;
    '*') _files ;;
    -|'') ;;
    *) _files -g "*.(${kind//,/|})" ;;
  esac
}
if [ "$funcstack[1]" = _turbanet ]; then _turbanet "$@"; else compdef _turbanet turbanet; fi
)SH";
}

// fish's -a argument for an argument of `kind` ("" for none, " -F" for any file).
std::string fish_values(const std::string& kind) {
  if (kind == "-") return "";
  if (kind == "*") return " -F";
  if (kind == "@keys") {
    // fish completes the whole word: each key with '=' (fish adds no space after it), and
    // key=NAME for the names a key takes, as bash and zsh offer after the '='.
    std::vector<std::string> words;
    for (const std::string& k : cfg::key_paths()) words.push_back(k + "=");
    for (const auto& [key, names] : cfg::key_values())
      for (const std::string& n : names) words.push_back(key + "=" + n);
    return " -a " + quoted(joined(words));
  }
  std::string words = kind[0] == '=' ? kind.substr(1) : kind;
  for (char& ch : words) ch = ch == ',' ? ' ' : ch;
  if (kind[0] == '=') return " -a " + quoted(words);
  std::string suffixes;  // files with each extension, and directories
  for (std::size_t b = 0, e; b < kind.size(); b = e + 1) {
    e = kind.find(',', b);
    if (e == std::string::npos) e = kind.size();
    suffixes += (suffixes.empty() ? "" : "; ") + std::string("__fish_complete_suffix .") + kind.substr(b, e - b);
  }
  return " -a " + quoted("(" + suffixes + ")");
}

std::string fish_script(const std::vector<Command>& cmds) {
  std::string s = "# fish completion for turbanet: commands, flags, config keys for --set, files by extension.\n"
                  "# Printed by `turbanet completion fish`; install it as turbanet.fish in\n"
                  "# share/fish/vendor_completions.d, or load it with  turbanet completion fish | source\n\n"
                  "complete -c turbanet -f\n";
  for (const Command& c : cmds) {
    // Where this command is being completed: its words seen (and, for one with subcommands,
    // none of these yet).
    std::string when;
    std::size_t b = 0;
    for (std::size_t e; b < c.path.size(); b = e + 1) {
      e = c.path.find(' ', b);
      if (e == std::string::npos) e = c.path.size();
      when += (when.empty() ? "" : "; and ") + std::string("__fish_seen_subcommand_from ") + c.path.substr(b, e - b);
    }
    std::vector<std::string> subs;
    for (const CLI::App* a : c.subs) subs.push_back(a->get_name());
    if (!subs.empty())
      when += (when.empty() ? "" : "; and ") + std::string("not __fish_seen_subcommand_from ") + joined(subs);
    const std::string head = "complete -c turbanet" + (when.empty() ? std::string() : " -n " + quoted(when));
    for (const CLI::App* a : c.subs) s += head + " -a " + a->get_name() + " -d " + quoted(a->get_description()) + "\n";
    for (const Arg& a : c.options) {
      std::string line = head;
      for (const std::string& n : a.names) line += n.rfind("--", 0) == 0 ? " -l " + n.substr(2) : " -s " + n.substr(1);
      // -x: the value alone (no file names) unless the value is a file.
      if (a.value) line += (a.kind[0] == '@' || a.kind[0] == '=' || a.kind == "-" ? " -x" : " -r") + fish_values(a.kind);
      s += line + " -d " + quoted(a.help) + "\n";
    }
    for (const Arg& a : c.positionals)
      if (a.kind != "-") s += head + fish_values(a.kind) + "\n";
  }
  return s;
}

}  // namespace

std::string completion_script(const CLI::App& app, const std::string& shell) {
  std::vector<Command> cmds;
  walk(&app, "", cmds);
  if (shell == "bash") return bash_script(cmds);
  if (shell == "zsh") return zsh_script(cmds);
  return fish_script(cmds);
}

}  // namespace tn
