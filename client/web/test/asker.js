// A stand-in for an agent CLI, for the browser tests and the screenshots:
// a runtime from the host's configuration file whose hooks report its
// turns, and its asking for approval, to the host.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A CLI whose hooks report its turns to the host, as agent CLIs' do: a
 * line starts a turn and ends it; the line `approve` first asks the user
 * for permission (the hook's `notification`, which names a permission)
 * and waits for the answer; the line `question` asks for an answer (a
 * `notification` that names no permission) and waits for it.
 */
export const ASKER = `#!/bin/sh
[ "$1" = "--notify" ] || { echo "asker: no --notify"; exit 2; }
notify="$2"
printf 'asker> '
while IFS= read -r line; do
  echo '{}' | sh -c "$notify --event turn_started"
  if [ "$line" = approve ]; then
    echo '{"message":"Asker needs your permission to use Bash"}' | sh -c "$notify --event notification"
    printf 'allow? '
    IFS= read -r answer
    echo "asker: $answer"
  elif [ "$line" = question ]; then
    echo '{"message":"Asker is waiting for your input"}' | sh -c "$notify --event notification"
    printf 'which? '
    IFS= read -r answer
    echo "asker: $answer"
  fi
  echo '{}' | sh -c "$notify --event turn_completed"
  printf 'asker> '
done
`;

/** The runtime `asker` in the host's configuration file. */
export const ASKER_CONFIG = `
[runtime.asker]
display_name = "Asker"
executable = ["asker"]
login = "not_required"
reads_raw_input = false
completion_args = ["--notify", "{notify}"]
limitations = ["NATIVE_RESUME_UNSUPPORTED", "HOST_LOSS_RESTARTS_FRESH", "PERMISSION_PROFILE_UNENFORCED", "RECEIPT_UNAVAILABLE"]
`;

/**
 * Writes `asker` and a configuration file naming it into a new directory;
 * `env` puts both in reach of a host (PATH, PANEHOST_CONFIG), `remove()`
 * deletes the directory.
 */
export function installAsker() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'panehost-web-asker-'));
  fs.writeFileSync(path.join(dir, 'asker'), ASKER, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'config.toml'), ASKER_CONFIG);
  return {
    env: { PATH: `${dir}:/usr/local/bin:/usr/bin:/bin`, PANEHOST_CONFIG: path.join(dir, 'config.toml') },
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
