#include "cli/tree_view.h"

#include <map>
#include <memory>
#include <string_view>

namespace xet::cli {
namespace {

struct Node {
  bool is_directory = false;
  uint64_t size = 0;
  std::map<std::string, std::unique_ptr<Node>> children;  // bytewise order
};

Node* Child(Node& parent, const std::string& name, bool is_directory) {
  auto& slot = parent.children[name];
  if (!slot) slot = std::make_unique<Node>();
  slot->is_directory = slot->is_directory || is_directory;
  return slot.get();
}

void Insert(Node& root, const TreeItem& item) {
  Node* node = &root;
  std::string_view rest = item.path;
  while (!rest.empty()) {
    const size_t slash = rest.find('/');
    const bool last = slash == std::string_view::npos;
    const std::string name(last ? rest : rest.substr(0, slash));
    rest = last ? std::string_view() : rest.substr(slash + 1);
    if (name.empty()) continue;  // tolerate "a//b" and a trailing '/'
    node = Child(*node, name, !last || item.is_directory);
    if (last && !item.is_directory) node->size = item.size;
  }
}

void Render(const Node& node, const std::string& indent,
            const std::function<std::string(uint64_t)>& size_text, std::string* out) {
  size_t i = 0;
  for (const auto& [name, child] : node.children) {
    const bool last = ++i == node.children.size();
    *out += indent;
    *out += last ? "└── " : "├── ";
    *out += name;
    if (child->is_directory) {
      *out += "/\n";
      Render(*child, indent + (last ? "    " : "│   "), size_text, out);
    } else {
      *out += "  " + size_text(child->size) + "\n";
    }
  }
}

}  // namespace

std::string RenderTree(const std::string& root_label, const std::vector<TreeItem>& items,
                       const std::function<std::string(uint64_t)>& size_text) {
  Node root;
  root.is_directory = true;
  for (const TreeItem& item : items) Insert(root, item);
  std::string out = root_label + "\n";
  Render(root, "", size_text, &out);
  return out;
}

}  // namespace xet::cli
