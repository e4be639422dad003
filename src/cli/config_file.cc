#include "cli/config_file.h"

#include <algorithm>

namespace xet::cli {

namespace {

constexpr const char* kConfigOption = "--config";

Status Refused(const std::string& path, const std::string& what) {
  return Status::InvalidArgument("config file " + path + ": " + what);
}

}  // namespace

void AddConfigFileOption(CLI::App* cmd, std::string* path) {
  cmd->add_option(kConfigOption, *path,
                  "Read options from a file of `key = value` lines (TOML/INI; keys are the long "
                  "options without dashes in front, e.g. listen = \"0.0.0.0:8080\"); a flag or "
                  "an XETSTORE_* variable beats the file")
      ->envname("XETSTORE_CONFIG");
}

Status ApplyConfigFile(CLI::App* cmd, const std::string& path) {
  std::vector<CLI::ConfigItem> items;
  try {
    items = CLI::ConfigTOML().from_file(path);
  } catch (const CLI::Error& e) {
    return Refused(path, e.what());
  }
  for (const CLI::ConfigItem& item : items) {
    // CLI11 reports a [section] header as an item of its own ("++"/"--" markers).
    if (!item.parents.empty() || item.name == "++" || item.name == "--") {
      return Refused(path, "sections are not supported (found [" +
                               (item.parents.empty() ? item.name : item.parents.front()) + "])");
    }
    std::string name = item.name;
    std::replace(name.begin(), name.end(), '_', '-');
    const std::string flag = "--" + name;
    CLI::Option* opt = nullptr;
    try {
      opt = cmd->get_option(flag);
    } catch (const CLI::OptionNotFound&) {
      return Refused(path, "unknown option '" + item.name + "' (see --help)");
    }
    if (flag == kConfigOption) return Refused(path, "'config' cannot name another file");
    if (opt->count() > 0) continue;  // given as a flag or an environment variable
    try {
      for (const std::string& value : item.inputs) opt->add_result(value);
      opt->run_callback();
    } catch (const CLI::Error& e) {
      return Refused(path, e.what());  // names the option
    }
  }
  return Status::Ok();
}

}  // namespace xet::cli
