"""Settings files (user / project / local / `.claude` / `.mcp.json` / `--settings` / CLI) into
config values.

A package because reading, writing and finding the files change for different reasons, and
the reader alone is more than a module should hold. Import from the module that owns a name:

- `values`: `Settings`, `HookEntry`, `HookCommand`, the sources (`SettingsSource`,
  `PROJECT_SOURCES`): what the rest of proctor receives; it never reads a file itself.
- `mcp_servers`: `McpServerConfig`, one typed MCP server (`Settings.mcp_servers`), how an
  `mcpServers` entry is read into one (`${VAR}`s filled in), and which server names work.
- `read`: `load_settings`, every source read and merged, highest first.
- `parse`: one file's object checked key by key into a layer, each bad part reported.
- `problems`: `SettingsProblem`, and finding a problem's line and column in the text.
- `paths`: `settings_paths`, where each source's file lives for a project.
- `write`: `remember_allow_rule`, `write_json_atomically`, `SettingsWriteError`.
- `sandbox`: the `sandbox` section's keys, and its layers merged into `SandboxSettings` once
  trust is known.

Nothing is re-exported here, so that importing one part (the paths, say) does not load the
rule parser with it.
"""
