// `xetstore token create | list | revoke`: manage user tokens in a node's data directory.
#include <cstdio>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>

#include "cli/node_config.h"
#include "cli/output.h"
#include "cli/serve_command.h"
#include "server/auth/token_service.h"

namespace xet::cli {
namespace {

struct CreateArgs {
  std::string name;
  std::string permission = "read";
  std::vector<std::string> scopes;
  int64_t expires_in_days = 0;
  bool json = false;
};

std::string FormatTime(int64_t t) {
  if (t == 0) return "never";
  char buf[32];
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Result<std::unique_ptr<Index>> OpenIndex(const NodeConfig& config) {
  return OpenConfiguredIndex(config);
}

int RunCreate(const NodeConfig& config, const CreateArgs& args) {
  const auto perm = ParsePermission(args.permission);
  if (!perm) {
    PrintError("unknown permission '" + args.permission + "'", "use read, write or admin");
    return kExitUsage;
  }
  if (*perm != Permission::kAdmin && args.scopes.empty()) {
    PrintError("a read or write token needs at least one --scope",
               "e.g. --scope myorg/models; only admin tokens may see every scope");
    return kExitUsage;
  }
  auto index = OpenIndex(config);
  if (!index.ok()) return ReportFailure(index.status());
  // No CAS-token key is needed here: only user tokens are created.
  TokenService tokens(**index, std::span<const uint8_t>{});
  const int64_t expires =
      args.expires_in_days > 0 ? tokens.Now() + args.expires_in_days * 86400 : 0;
  auto t = tokens.CreateUserToken(args.name, *perm, args.scopes, expires);
  if (!t.ok()) return ReportFailure(t.status());
  if (args.json) {
    std::printf("%s\n", nlohmann::json{{"id", t->record.id},
                                       {"token", t->secret},
                                       {"permission", args.permission},
                                       {"scopes", args.scopes},
                                       {"expires_at", expires}}
                            .dump()
                            .c_str());
  } else {
    std::printf("%s\n", t->secret.c_str());
    std::fprintf(stderr, "created token %s (%s, %s); it is shown only once\n", t->record.id.c_str(),
                 args.permission.c_str(), args.scopes.empty() ? "all scopes" : "scoped");
  }
  return kExitOk;
}

int RunList(const NodeConfig& config, bool json) {
  auto index = OpenIndex(config);
  if (!index.ok()) return ReportFailure(index.status());
  auto tokens = (*index)->ListTokens();
  if (!tokens.ok()) return ReportFailure(tokens.status());
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const TokenRecord& t : *tokens) {
      arr.push_back({{"id", t.id},
                     {"name", t.name},
                     {"permission", PermissionName(t.permission)},
                     {"scopes", t.scopes},
                     {"created_at", t.created_at},
                     {"expires_at", t.expires_at},
                     {"revoked", t.revoked}});
    }
    std::printf("%s\n", arr.dump().c_str());
    return kExitOk;
  }
  std::printf("%-18s %-16s %-6s %-8s %-20s %s\n", "ID", "NAME", "PERM", "STATE", "EXPIRES",
              "SCOPES");
  for (const TokenRecord& t : *tokens) {
    std::string scopes;
    for (const auto& s : t.scopes) scopes += (scopes.empty() ? "" : ",") + s;
    std::printf("%-18s %-16s %-6s %-8s %-20s %s\n", t.id.c_str(), t.name.c_str(),
                PermissionName(t.permission), t.revoked ? "revoked" : "active",
                FormatTime(t.expires_at).c_str(), scopes.empty() ? "*" : scopes.c_str());
  }
  return kExitOk;
}

int RunRevoke(const NodeConfig& config, const std::string& id) {
  auto index = OpenIndex(config);
  if (!index.ok()) return ReportFailure(index.status());
  Status st = (*index)->RevokeToken(id);
  if (!st.ok()) return ReportFailure(st, "`xetstore token list` shows the token ids");
  std::fprintf(stderr, "revoked %s\n", id.c_str());
  return kExitOk;
}

}  // namespace

void AddTokenCommands(CLI::App& app, int* exit_code) {
  auto config = std::make_shared<NodeConfig>();
  CLI::App* token = app.add_subcommand(
      "token", "Manage the user tokens of a server node (works on its --data-dir directly)");
  token->require_subcommand(1);
  AddNodeOptions(token, config.get(), NodeOptions::kIndex);

  auto create_args = std::make_shared<CreateArgs>();
  CLI::App* create = token->add_subcommand(
      "create", "Create a user token and print it (once). Tokens start with hf_.");
  create->add_option("--name", create_args->name, "Label shown by `token list`")->required();
  create->add_option("--permission", create_args->permission, "read, write or admin")
      ->capture_default_str();
  create->add_option("--scope", create_args->scopes,
                     "Scope(s) the token may use, e.g. myorg/models (repeatable)");
  create->add_option("--expires-in-days", create_args->expires_in_days,
                     "Days until the token expires (default: never)");
  create->add_flag("--json", create_args->json, "Print a JSON object");
  create->callback(
      [config, create_args, exit_code] { *exit_code = RunCreate(*config, *create_args); });

  auto list_json = std::make_shared<bool>(false);
  CLI::App* list = token->add_subcommand("list", "List tokens (never their secrets)");
  list->add_flag("--json", *list_json, "Print a JSON array");
  list->callback([config, list_json, exit_code] { *exit_code = RunList(*config, *list_json); });

  auto revoke_id = std::make_shared<std::string>();
  CLI::App* revoke = token->add_subcommand("revoke", "Revoke a token by its id");
  revoke->add_option("id", *revoke_id, "Token id (from `token list`)")->required();
  revoke->callback([config, revoke_id, exit_code] { *exit_code = RunRevoke(*config, *revoke_id); });
}

}  // namespace xet::cli
