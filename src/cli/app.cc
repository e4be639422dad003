#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "cli/hash_commands.h"
#include "cli/output.h"
#include "cli/serve_command.h"

namespace xet::cli {

int RunApp(int argc, char** argv) {
  CLI::App app{
      "xetstore: self-hosted, deduplicating storage for large, changing binary data.\n"
      "Speaks the Xet protocol: files are split into content-defined chunks, so a new\n"
      "version of a file only stores and transfers the chunks that changed.",
      "xetstore"};
  app.set_version_flag("--version", "xetstore 0.1.0");
  app.require_subcommand(1);
  int exit_code = kExitOk;
  AddServeCommand(app, &exit_code);
  AddTokenCommands(app, &exit_code);
  AddHashCommands(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);  // prints help/version (exit 0) or the usage error (exit non-zero)
  } catch (const std::exception& e) {
    PrintError(e.what());
    return kExitFailure;
  }
  return exit_code;
}

}  // namespace xet::cli
