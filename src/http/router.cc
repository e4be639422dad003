#include "http/router.h"

#include <algorithm>
#include <set>

#include "http/url.h"

namespace xet {
namespace {

// Splits "/a/b/c" into {"a", "b", "c"}; "/" gives {""}; "/a/" gives {"a", ""}.
std::vector<std::string_view> SplitPath(std::string_view path) {
  std::vector<std::string_view> out;
  if (path.empty() || path[0] != '/') return out;
  path.remove_prefix(1);
  while (true) {
    size_t slash = path.find('/');
    out.push_back(path.substr(0, slash));
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return out;
}

std::string Decode(std::string_view text) {
  // A malformed escape is left as written: the server rejects such targets up front.
  std::optional<std::string> decoded = PercentDecode(text);
  return decoded ? std::move(*decoded) : std::string(text);
}

}  // namespace

int RouteMatch::status() const {
  switch (kind) {
    case Kind::kFound:
      return 200;
    case Kind::kMethodNotAllowed:
      return 405;
    case Kind::kNotFound:
      break;
  }
  return 404;
}

Status Router::Add(std::string_view method, std::string_view pattern, HttpHandler handler,
                   RouteOptions options) {
  if (method.empty()) return Status::InvalidArgument("route method is empty");
  if (!handler) return Status::InvalidArgument("route handler is empty");
  if (pattern.empty() || pattern[0] != '/') {
    return Status::InvalidArgument("route pattern must start with '/': " + std::string(pattern));
  }
  Route route;
  route.method = std::string(method);
  route.pattern = std::string(pattern);
  std::set<std::string, std::less<>> names;
  std::vector<std::string_view> parts = SplitPath(pattern);
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view part = parts[i];
    auto bad = [&](std::string_view why) {
      return Status::InvalidArgument("route pattern " + std::string(pattern) + ": " +
                                     std::string(why));
    };
    if (!part.empty() && part.front() == '{') {
      if (part.back() != '}' || part.size() < 3) return bad("malformed parameter segment");
      std::string_view name = part.substr(1, part.size() - 2);
      Segment::Kind kind = Segment::Kind::kParam;
      if (name.front() == '*') {
        name.remove_prefix(1);
        kind = Segment::Kind::kCatchAll;
        if (i + 1 != parts.size()) return bad("a catch-all must be the last segment");
      }
      if (name.empty() || name.find_first_of("{}/*") != std::string_view::npos) {
        return bad("malformed parameter name");
      }
      if (!names.emplace(name).second) return bad("duplicate parameter name");
      route.segments.push_back({kind, std::string(name)});
    } else {
      if (part.find_first_of("{}") != std::string_view::npos) {
        return bad("braces must enclose a whole segment");
      }
      route.segments.push_back({Segment::Kind::kLiteral, Decode(part)});
    }
  }
  // Two patterns with the same shape (same literals, parameters in the same places)
  // would be ambiguous.
  for (const Route& existing : routes_) {
    if (existing.method != route.method || existing.segments.size() != route.segments.size()) {
      continue;
    }
    bool same = true;
    for (size_t i = 0; i < route.segments.size() && same; ++i) {
      const Segment& a = existing.segments[i];
      const Segment& b = route.segments[i];
      same = a.kind == b.kind && (a.kind != Segment::Kind::kLiteral || a.text == b.text);
    }
    if (same) {
      return Status::InvalidArgument("route already registered: " + route.method + " " +
                                     route.pattern);
    }
  }
  if (options.name.empty()) options.name = route.pattern;
  route.handler = std::move(handler);
  route.options = std::move(options);
  routes_.push_back(std::move(route));
  return Status::Ok();
}

bool Router::Has(std::string_view method, std::string_view pattern) const {
  return std::any_of(routes_.begin(), routes_.end(), [&](const Route& route) {
    return route.method == method && route.pattern == pattern;
  });
}

bool Router::Match(const Route& route, const std::vector<std::string_view>& segments,
                   std::string_view path, RouteParams* params, std::vector<int>* score) {
  params->clear();
  score->clear();
  for (size_t i = 0; i < route.segments.size(); ++i) {
    const Segment& segment = route.segments[i];
    if (segment.kind == Segment::Kind::kCatchAll) {
      if (i > segments.size()) return false;
      std::string_view rest;
      if (i < segments.size()) {
        // The remainder of the raw path from this segment on.
        size_t offset = static_cast<size_t>(segments[i].data() - path.data());
        rest = path.substr(offset);
      } else {
        return false;  // "/x" does not match "/x/{*rest}"; "/x/" does, with rest "".
      }
      (*params)[segment.text] = Decode(rest);
      score->push_back(0);
      return true;
    }
    if (i >= segments.size()) return false;
    if (segment.kind == Segment::Kind::kParam) {
      if (segments[i].empty()) return false;
      (*params)[segment.text] = Decode(segments[i]);
      score->push_back(1);
    } else {
      if (Decode(segments[i]) != segment.text) return false;
      score->push_back(2);
    }
  }
  return route.segments.size() == segments.size();
}

RouteMatch Router::Find(std::string_view method, std::string_view path) const {
  RouteMatch result;
  std::vector<std::string_view> segments = SplitPath(path);
  if (segments.empty()) return result;  // not an absolute path

  const Route* best = nullptr;
  const Route* best_get = nullptr;  // HEAD falls back to GET
  std::vector<int> best_score;
  std::vector<int> best_get_score;
  RouteParams best_params;
  RouteParams best_get_params;
  std::set<std::string> allowed;
  RouteParams params;
  std::vector<int> score;
  for (const Route& route : routes_) {
    if (!Match(route, segments, path, &params, &score)) continue;
    allowed.insert(route.method);
    if (route.method == method) {
      if (best == nullptr || score > best_score) {
        best = &route;
        best_score = score;
        best_params = params;
      }
    } else if (method == "HEAD" && route.method == "GET") {
      if (best_get == nullptr || score > best_get_score) {
        best_get = &route;
        best_get_score = score;
        best_get_params = params;
      }
    }
  }
  if (best == nullptr && best_get != nullptr) {
    best = best_get;
    best_params = std::move(best_get_params);
  }
  if (best != nullptr) {
    result.kind = RouteMatch::Kind::kFound;
    result.handler = &best->handler;
    result.options = &best->options;
    result.params = std::move(best_params);
    return result;
  }
  if (allowed.empty()) return result;
  if (allowed.count("GET") != 0) allowed.insert("HEAD");
  result.kind = RouteMatch::Kind::kMethodNotAllowed;
  for (const std::string& m : allowed) {
    if (!result.allow.empty()) result.allow += ", ";
    result.allow += m;
  }
  return result;
}

}  // namespace xet
