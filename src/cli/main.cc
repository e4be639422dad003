// Entry point of the single xetstore binary: the command-line boundary, where exceptions
// from argument parsing are turned into one-line errors and exit codes.
#include "cli/app.h"

int main(int argc, char** argv) { return xet::cli::RunApp(argc, argv); }
