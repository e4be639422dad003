#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

namespace xet::cli {

int RunApp(int argc, char** argv) {
  CLI::App app{"xetstore: self-hosted, deduplicating storage that speaks the Xet protocol"};
  app.require_subcommand(1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return 0;
}

}  // namespace xet::cli
