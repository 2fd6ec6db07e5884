// The one way YAML text becomes a tree here (yaml_util.h, load_yaml): yaml-cpp's events are
// counted first, so that aliases cannot make a tree that loops or expands without bound.
#include <algorithm>
#include <sstream>
#include <vector>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

#include "config/yaml_util.h"
#include "util/utf8.h"

namespace tn::cfg {
namespace {

// Walks one document's events as the tree yaml-cpp would build (an alias is the node its
// anchor names, shared) and counts what a reader of that tree visits: every alias's node
// again. Throws YamlInputError at the alias or collection that goes beyond a limit.
class BoundsCheck final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const Anchor& a = anchor < anchors_.size() ? anchors_[anchor] : Anchor{};
    if (!a.complete)
      throw YamlInputError(mark, "this alias refers to a node that contains it, a loop that has no end when read; "
                                 "an alias may only repeat a node defined before it (hint: replace the alias by the "
                                 "values it should stand for)");
    aliased_ += a.nodes;
    if (aliased_ > kMaxYamlAliasNodes)
      throw YamlInputError(mark, "aliases expand to more than " + std::to_string(kMaxYamlAliasNodes) +
                                 " nodes here (each alias counts the whole node it repeats); a configuration needs "
                                 "far fewer (hint: write the values out, or repeat smaller nodes)");
    add(mark, a.nodes, a.depth);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Anchor {
    std::size_t nodes = 0;  // in its tree, aliases expanded
    std::size_t depth = 0;  // levels of its tree, aliases expanded (a scalar: 1)
    bool complete = false;  // false while its collection is still open (or never defined)
  };
  struct Open {
    YAML::Mark mark;
    YAML::anchor_t anchor;
    std::size_t nodes = 1, child_depth = 0;
  };

  void define(YAML::anchor_t anchor, const Anchor& a) {
    if (anchor == YAML::NullAnchor) return;
    if (anchor >= anchors_.size()) anchors_.resize(anchor + 1);
    anchors_[anchor] = a;
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    define(anchor, {1, 1, true});
    add(mark, 1, 1);
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (stack_.size() >= kMaxYamlDepth) too_deep(mark);
    define(anchor, {});
    stack_.push_back({mark, anchor});
  }
  void close() {
    const Open o = stack_.back();
    stack_.pop_back();
    define(o.anchor, {o.nodes, o.child_depth + 1, true});
    add(o.mark, o.nodes, o.child_depth + 1);
  }
  // A finished node of `nodes` nodes and `depth` levels becomes a child of the open collection.
  void add(const YAML::Mark& mark, std::size_t nodes, std::size_t depth) {
    if (stack_.size() + depth > kMaxYamlDepth) too_deep(mark);
    if (stack_.empty()) return;
    stack_.back().nodes += nodes;
    stack_.back().child_depth = std::max(stack_.back().child_depth, depth);
  }
  [[noreturn]] static void too_deep(const YAML::Mark& mark) {
    throw YamlInputError(mark, "nested more than " + std::to_string(kMaxYamlDepth) +
                               " levels deep (counting what aliases repeat); a configuration needs far fewer (hint: "
                               "look for an unclosed [ or { or an alias inside what it repeats)");
  }

  std::vector<Anchor> anchors_;  // by yaml-cpp's anchor number
  std::vector<Open> stack_;
  std::size_t aliased_ = 0;  // nodes that aliases repeat, so far
};

}  // namespace

YAML::Node load_yaml(const std::string& text) {
  if (const std::size_t bad = invalid_utf8(text); bad != std::string::npos) {
    const TextPosition p = text_position(text, bad);
    YAML::Mark mark;
    mark.pos = static_cast<int>(bad);
    mark.line = static_cast<int>(p.line - 1);
    mark.column = static_cast<int>(p.column - 1);
    throw YamlInputError(mark, utf8_problem(text, bad));
  }
  {
    std::istringstream in(text);
    YAML::Parser parser(in);
    BoundsCheck check;
    parser.HandleNextDocument(check);  // the first document, the one YAML::Load reads
  }
  return YAML::Load(text);
}

YAML::Node parse_document(const std::string& text, const Origin& origin) {
  try {
    YAML::Node root = load_yaml(text);
    if (!root.IsDefined() || root.IsNull()) root.reset(YAML::Node(YAML::NodeType::Map));
    return root;
  } catch (const YamlInputError& e) {
    throw ConfigError(origin.where(e.mark, "") + ": " + e.msg);
  } catch (const YAML::Exception& e) {
    throw ConfigError(origin.where(e.mark, "") + ": invalid YAML: " + e.msg);
  }
}

}  // namespace tn::cfg
