// The form that starts a pane: a runtime from the host's `runtimes`, each
// with its readiness (one that is not ready is listed, with the reason,
// but cannot be chosen), a working directory, labels (NAME=VALUE) and a
// permission profile (the runtime's default, or one it enforces).

import { runtimes, startPane } from '/host-api.js';

const PROFILES = ['read_only', 'workspace_write', 'full_access'];

/** `a=1 b=2` or `a=1, b=2` as `{a: "1", b: "2"}`; throws on a word without `=`. */
export function parseLabels(text) {
  const labels = {};
  for (const word of text.split(/[\s,]+/).filter(Boolean)) {
    const at = word.indexOf('=');
    if (at <= 0) throw new Error(`a label is NAME=VALUE, not ${JSON.stringify(word)}`);
    labels[word.slice(0, at)] = word.slice(at + 1);
  }
  return labels;
}

/** `ready`, `reduced`, or `not ready: REASON`. */
function readinessText(runtime) {
  if (runtime.readiness === 'not_ready') {
    return `not ready (${runtime.readiness_gate ?? 'unknown'}): ${runtime.readiness_reason ?? ''}`.trim();
  }
  if (runtime.readiness === 'reduced') return `reduced: ${runtime.readiness_reason ?? ''}`.trim();
  return runtime.readiness || 'unknown';
}

export class StartForm {
  /** `onStarted(paneSummary)` is called after a start. */
  constructor({ form, onStarted }) {
    this.form = form;
    this.onStarted = onStarted;
    this.runtime = form.querySelector('#start-runtime');
    this.readiness = form.querySelector('#start-readiness');
    this.cwd = form.querySelector('#start-cwd');
    this.labels = form.querySelector('#start-labels');
    this.profile = form.querySelector('#start-profile');
    this.submit = form.querySelector('button[type=submit]');
    this.result = form.querySelector('#start-result');
    this.known = [];
    this.runtime.addEventListener('change', () => this.showRuntime());
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.start();
    });
  }

  /** Asks the host for its runtimes (again). */
  async load() {
    try {
      this.known = await runtimes();
    } catch (error) {
      this.say(`Cannot list the runtimes: ${error.message}`, true);
      return;
    }
    const chosen = this.runtime.value;
    this.runtime.replaceChildren(
      ...this.known.map((runtime) => {
        const option = document.createElement('option');
        option.value = runtime.id;
        option.dataset.readiness = runtime.readiness;
        option.textContent = `${runtime.id} · ${readinessText(runtime)}`;
        option.title = readinessText(runtime);
        // Not ready: shown, with the reason, but not startable.
        option.disabled = runtime.readiness === 'not_ready';
        return option;
      }),
    );
    const startable = this.known.filter((runtime) => runtime.readiness !== 'not_ready');
    const keep = startable.find((runtime) => runtime.id === chosen) ?? startable[0];
    if (keep) this.runtime.value = keep.id;
    this.showRuntime();
  }

  selected() {
    return this.known.find((runtime) => runtime.id === this.runtime.value);
  }

  /** The chosen runtime's readiness, and the profiles it enforces. */
  showRuntime() {
    const runtime = this.selected();
    this.readiness.textContent = runtime ? readinessText(runtime) : 'no runtime can be started';
    this.submit.disabled = !runtime || runtime.readiness === 'not_ready';
    const fallback = document.createElement('option');
    fallback.value = '';
    fallback.textContent = runtime?.default_permission_profile
      ? `default (${runtime.default_permission_profile})`
      : "default (the runtime's own)";
    this.profile.replaceChildren(
      fallback,
      ...PROFILES.map((name) => {
        const option = document.createElement('option');
        option.value = name;
        const enforced = runtime?.permission_profiles?.includes(name);
        option.textContent = enforced ? name : `${name} (not enforced)`;
        option.disabled = !enforced;
        return option;
      }),
    );
  }

  async start() {
    let labels;
    try {
      labels = parseLabels(this.labels.value);
    } catch (error) {
      this.say(error.message, true);
      return;
    }
    const start = { runtime: this.runtime.value, labels };
    if (this.cwd.value.trim()) start.cwd = this.cwd.value.trim();
    if (this.profile.value) start.permission_profile = this.profile.value;
    this.submit.disabled = true;
    try {
      const pane = await startPane(start);
      this.say(`Started ${pane.id}.`, false);
      this.onStarted(pane);
    } catch (error) {
      this.say(`Cannot start: ${error.message}`, true);
    } finally {
      this.showRuntime();
    }
  }

  say(text, isError) {
    this.result.textContent = text;
    this.result.classList.toggle('error', isError);
    this.result.hidden = false;
  }
}
