// Registering a table of routes whose handlers are member functions of one service object.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>

#include "common/status.h"
#include "http/message.h"
#include "http/router.h"

namespace xet {

// One row of a service's route table. `max_body` is the largest request body accepted
// (413 above it); 0 for routes that take no body. `pre_body`, when set, is the route's
// RouteOptions::pre_body check (router.h): it sees the request without its body and
// refuses it (e.g. a missing token) before any body byte is read.
template <class Service>
struct MemberRoute {
  const char* method;
  const char* pattern;
  HttpResponse (Service::*handler)(const HttpRequest&, const RouteParams&);
  const char* name;  // metrics and access-log label
  uint64_t max_body;
  std::optional<HttpResponse> (Service::*pre_body)(const HttpRequest&,
                                                   const RouteParams&) = nullptr;
};

// Adds every row of `routes` to `router`, each calling its member function on `service`.
// `service` must outlive the router. Fails (at the first bad row, earlier rows stay added)
// only when Router::Add does: a malformed or duplicate pattern.
template <class Service>
Status RegisterMemberRoutes(Router& router, Service& service,
                            std::span<const MemberRoute<Service>> routes) {
  for (const MemberRoute<Service>& r : routes) {
    RouteOptions opts;
    opts.name = r.name;
    opts.max_body_bytes = r.max_body;
    auto handler = [&service, method = r.handler](const HttpRequest& req,
                                                  const RouteParams& params) {
      return (service.*method)(req, params);
    };
    if (r.pre_body != nullptr) {
      opts.pre_body = [&service, check = r.pre_body](const HttpRequest& head,
                                                     const RouteParams& params) {
        return (service.*check)(head, params);
      };
    }
    XET_RETURN_IF_ERROR(router.Add(r.method, r.pattern, std::move(handler), opts));
  }
  return Status::Ok();
}

}  // namespace xet
