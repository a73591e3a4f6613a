// htp-host: the command-line front door of HTP.
#include <iostream>

#include <htp/abi.h>

#include <CLI/CLI.hpp>

#include "cli/cli_session.hpp"
#include "diag/crash_report.hpp"

#ifndef HTP_VERSION_STRING
#define HTP_VERSION_STRING "unknown"
#endif

int main(int argc, char **argv) {
  using namespace htp::cli;
  htp::crash::install();  // a plugin crashing a pass, an init or a run names itself before the process dies
  Session session;
  CLI::App app{"htp-host: compile Python tile programs through plugin pipelines into artifact packages",
               "htp-host"};
  app.set_version_flag("--version", std::string("htp-host ") + HTP_VERSION_STRING + " (ABI " +
                                        std::to_string(HTP_ABI_MAJOR) + "." + std::to_string(HTP_ABI_MINOR) + ")");
  app.add_option("--plugins", session.plugin_specs,
                 "Plugin directory, plugin library (.so), plugin-set JSON file or Python extension (.py); repeatable. Added to the "
                 "built-in plugins (a library named like a built-in one replaces it). HTP_PLUGIN_PATH adds more.")
      ->type_name("PATH");
  app.add_flag("--no-builtin-plugins", session.no_builtin_plugins,
               "Load exactly the --plugins set (and HTP_PLUGIN_PATH), without the built-in plugins");
  app.add_option("--log-level", session.log_level, "trace|debug|info|warn|error|off (default: HTP_LOG_LEVEL or warn)")
      ->type_name("LEVEL");
  app.add_flag("--safe-plugins", session.safe_plugins,
               "Probe every plugin's query and init in a child process first; skip (with a warning) those that "
               "crash, abort, hang or fail. Verdicts are remembered by path, size and mtime.");
  app.add_option("--probe-cache", session.probe_cache, "Verdict file of --safe-plugins (default: "
                                                       "$HTP_CACHE_DIR or ~/.cache/htp, plugin-probes.json)")
      ->type_name("FILE");
  app.add_option("--probe-timeout-ms", session.probe_timeout_ms, "Time limit of one --safe-plugins probe")
      ->check(CLI::PositiveNumber);
  app.require_subcommand(1);

  register_plugins_command(app, session);
  register_resolve_command(app, session);
  register_compile_command(app, session);
  register_package_commands(app, session);
  register_run_command(app, session);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    // A word that names no subcommand (`htp-host bogus`) is left over: CLI11 says only that a subcommand is
    // required, which reads as if none was given.
    CLI::App *at = &app;
    std::string path = "htp-host";
    while (!at->get_subcommands().empty()) {
      at = at->get_subcommands().front();
      path += " " + at->get_name();
    }
    const std::vector<std::string> left = at->remaining();
    if (at->get_require_subcommand_min() > 0 && !left.empty() && left.front().rfind('-', 0) != 0) {
      std::string names;
      for (const CLI::App *sub : at->get_subcommands([](const CLI::App *) { return true; }))
        names += (names.empty() ? "" : ", ") + sub->get_name();
      std::cerr << path << ": error: unknown subcommand '" << left.front() << "' (the subcommands: " << names
                << ")\nRun with --help for more information.\n";
      return kExitUsage;
    }
    app.exit(e);  // prints the message and usage hint to stderr
    return kExitUsage;
  }
  if (!configure_logging(session.log_level)) {
    std::cerr << "htp-host: error: unknown log level '" << session.log_level << "'\n";
    return kExitUsage;
  }
  if (!session.action) {
    std::cerr << app.help();
    return kExitUsage;
  }
  try {
    const int status = session.action();
    // A plugin of the set that failed to load (printed when it did) fails every subcommand that loaded the
    // set, even one that went on without it (resolve, verify, plugins inspect): its output lacks the plugin.
    return status == kExitOk && session.plugin_errors() ? kExitError : status;
  } catch (const std::exception &e) {
    std::cerr << "htp-host: error: internal error: " << e.what() << '\n';
    return kExitError;
  }
}
