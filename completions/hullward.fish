# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_hullward_global_optspecs
    string join \n config= profile= root= include= ro= deny= read= write= net= allow-host= timeout= env= hitl= unattended-policy= no-strict yolo audit= workspace= review json h/help V/version
end

function __fish_hullward_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_hullward_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_hullward_using_subcommand
    set -l cmd (__fish_hullward_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c hullward -n "__fish_hullward_needs_command" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_needs_command" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_needs_command" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_needs_command" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_needs_command" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_needs_command" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_needs_command" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_needs_command" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_needs_command" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_needs_command" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_needs_command" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_needs_command" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_needs_command" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_needs_command" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_needs_command" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_needs_command" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_needs_command" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_needs_command" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_needs_command" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_needs_command" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_needs_command" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_needs_command" -s V -l version -d 'Print version'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "run" -d 'Run one program under kernel enforcement and filter its output'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "sh" -d 'Check a shell command string with the shell guard, then run it as `/bin/sh -c`'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "check" -d 'Decide a request without carrying it out'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "filter" -d 'Copy stdin to stdout with secret values masked and protected diff bodies hidden'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "explain" -d 'Print the enforcement `run` would apply'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "validate" -d 'Validate the configuration: errors and warnings with file:line'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "doctor" -d 'Report what this kernel can enforce and whether strict mode can run here'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "serve" -d 'Run the supervisor daemon on a Unix socket'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "mcp" -d 'Serve the tool calls as an MCP server on stdin/stdout (for Claude Code, Codex, any MCP client)'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "audit" -d 'Read the audit log back as a timeline of decisions, calls, egress and quarantined paths'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "review" -d 'Show a held overlay call\'s changes (`--review`) as a diff'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "apply" -d 'Apply a held overlay call\'s changes (protected paths and conflicts are refused)'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "discard" -d 'Throw a held overlay call\'s changes away'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "undo" -d 'Put back what an applied overlay call overwrote or deleted, and remove what it created'
complete -c hullward -n "__fish_hullward_needs_command" -f -a "backups" -d 'List the applied overlay calls\' backups with their sizes, and the held calls'
complete -c hullward -n "__fish_hullward_using_subcommand run" -l connect -d 'Send the call to the `hullward serve` on this socket (also HULLWARD_SOCKET)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand run" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand run" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand run" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand run" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand run" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand run" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand run" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand run" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand run" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand run" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand run" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand run" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand run" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand run" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand run" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand run" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand run" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand run" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand run" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand run" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand run" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l connect -d 'Send the call to the `hullward serve` on this socket (also HULLWARD_SOCKET)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand sh" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand sh" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -f -a "shell" -d 'Decide a shell command string'
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -f -a "path" -d 'Decide a file operation: OP is read, write, list, delete or exec'
complete -c hullward -n "__fish_hullward_using_subcommand check; and not __fish_seen_subcommand_from shell path url" -f -a "url" -d 'Decide an outbound request (host allowlist, private ranges)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from shell" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from path" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand check; and __fish_seen_subcommand_from url" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand filter" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand filter" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand explain" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand explain" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand validate" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand validate" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l socket -d 'The socket to create (mode 0600)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand serve" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand serve" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand mcp" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l since -d 'Only records at or after T: a time (2026-04-22, 2026-04-22T15:30:00Z) or an age (30m, 2h, 7d)' -r
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l call -d 'Only the records of this call' -r
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand audit" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand audit" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand review" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand review" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand review" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand review" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand review" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand review" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand review" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand review" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand review" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand review" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand review" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand review" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand review" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand review" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand review" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand review" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand review" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand review" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand review" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand review" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand review" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand apply" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand apply" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand discard" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand discard" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand undo" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand undo" -s h -l help -d 'Print help'
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l config -d 'YAML configuration (fuseraft\'s `Security:` plus hullward\'s `Sandbox:`)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l profile -d 'A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file' -r
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l root -d 'The sandbox root (default: the current directory)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l include -d 'Another allowed root (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l ro -d 'A directory (or file) the program may read and execute but never change (repeatable)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l deny -d 'A deny glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l read -d 'A read glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l write -d 'A write glob (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l net -d 'Network mode' -r -f -a "none\t''
proxy\t''
host\t''"
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l allow-host -d 'A host the egress proxy lets through (repeatable; implies --net proxy)' -r
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l timeout -d 'Kill the whole process tree after this long (e.g. 30s, 5m)' -r
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l env -d 'Pass this environment variable through (repeatable)' -r
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l hitl -d 'Human-in-the-loop approval (default: on when stdin is a terminal)' -r -f -a "on\t''
off\t''"
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l unattended-policy -d 'What happens to a call needing approval when no human is attached' -r -f -a "deny\t''
allow\t''"
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l audit -d 'The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl)' -r -F
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l workspace -d 'Where the program\'s writes land: in place, in a layer applied when it ends, or thrown away' -r -f -a "direct\t''
overlay\t''
ephemeral\t''"
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l no-strict -d 'Run with what the kernel offers instead of refusing (exit 3)'
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l yolo -d 'No sandbox at all (loud warning)'
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l review -d 'Hold an overlay call\'s changes for `hullward review|apply|discard` (implies --workspace overlay)'
complete -c hullward -n "__fish_hullward_using_subcommand backups" -l json -d 'Machine-readable output'
complete -c hullward -n "__fish_hullward_using_subcommand backups" -s h -l help -d 'Print help'
