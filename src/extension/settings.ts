// The extension's settings, read once into a typed object. Reading goes through a small interface so the
// parsing and its fallbacks are unit-tested without VS Code; the adapter in context.ts passes
// vscode.workspace.getConfiguration('collectiveProfiler').

import { TRACE_DETAILS, isNcclVersion, type TraceDetail } from '../engine/index';

/** Severity a user can give a rule: `default` keeps the rule's own, `off` hides it. */
export type RuleSeverity = 'default' | 'error' | 'warning' | 'information' | 'hint' | 'off';
export const RULE_SEVERITIES: readonly RuleSeverity[] = ['default', 'error', 'warning', 'information', 'hint', 'off'];

/** The code lens kinds, each switchable on its own. */
export type LensKind = 'collectives' | 'bucketRecommendation' | 'scalingWarnings' | 'configFiles' | 'measurementFiles';
export const LENS_KINDS: readonly LensKind[] = [
  'collectives',
  'bucketRecommendation',
  'scalingWarnings',
  'configFiles',
  'measurementFiles',
];

export type Launcher = 'direct' | 'torchrun';

export interface Settings {
  /** A preset name or a path to a system file. */
  readonly system: string;
  readonly nodes: number;
  /** The NCCL release whose choices predictions follow, e.g. "2.26.2"; empty: the system file's, else the newest. */
  readonly ncclVersion: string;
  readonly defaultBucketBytes: number;
  /** How a profiled collective's trace is drawn: every rank, one lane group per set of alike nodes, or by size. */
  readonly traceDetail: TraceDetail;
  readonly lenses: Readonly<Record<LensKind, boolean>>;
  readonly diagnostics: {
    readonly enabled: boolean;
    readonly debounceMs: number;
    readonly rules: Readonly<Record<string, RuleSeverity>>;
    /** Also show what the analysis suspects but cannot prove (test code, hard-coded divisors). */
    readonly hints: boolean;
  };
  readonly native: {
    /** Empty when unset: the runner then looks in the environment. */
    readonly pythonPath: string;
    readonly torchrunPath: string;
    readonly launcher: Launcher;
    /** 0 means "one per GPU, or 4 CPU ranks". */
    readonly processes: number;
    readonly timeoutSeconds: number;
  };
}

/** What a configuration source must answer: a value per key, plus where it was set (for machine scope). */
export interface SettingsSource {
  get(key: string): unknown;
  /** Only the user's (global) value; workspace values are ignored for executables. */
  globalValue?(key: string): unknown;
}

/** A setting that had the wrong type or range, so its default was used. */
export interface SettingProblem {
  readonly key: string;
  readonly message: string;
}

export const DEFAULT_SETTINGS: Settings = {
  system: 'dgx-h100',
  nodes: 1,
  ncclVersion: '',
  defaultBucketBytes: 25 * 1024 * 1024,
  traceDetail: 'auto',
  lenses: {
    collectives: true,
    bucketRecommendation: true,
    scalingWarnings: true,
    configFiles: true,
    measurementFiles: true,
  },
  diagnostics: { enabled: true, debounceMs: 300, rules: {}, hints: false },
  native: { pythonPath: '', torchrunPath: '', launcher: 'direct', processes: 0, timeoutSeconds: 300 },
};

const RULE_CODE = /^CP\d{3}$/;

/**
 * Reads every setting, replacing missing or malformed values by their defaults and listing each replacement, so a
 * typo in settings.json is reported in the log instead of breaking lenses or diagnostics.
 */
export function readSettings(source: SettingsSource): { settings: Settings; problems: SettingProblem[] } {
  const problems: SettingProblem[] = [];
  const pick = <T>(
    key: string,
    fallback: T,
    check: (v: unknown) => v is T,
    what: string,
    read: (k: string) => unknown = (k) => source.get(k),
  ): T => {
    const raw = read(key);
    if (raw === undefined || raw === null) return fallback;
    if (check(raw)) return raw;
    problems.push({
      key: `collectiveProfiler.${key}`,
      message: `expected ${what}, got ${JSON.stringify(raw)}; using ${JSON.stringify(fallback)}`,
    });
    return fallback;
  };
  const isString = (v: unknown): v is string => typeof v === 'string';
  const isBool = (v: unknown): v is boolean => typeof v === 'boolean';
  const intIn =
    (min: number, max: number) =>
    (v: unknown): v is number =>
      typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
  const positive = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;
  const isLauncher = (v: unknown): v is Launcher => v === 'direct' || v === 'torchrun';
  // Executables come from the user's own settings only: a workspace must never choose what runs.
  const machine = (key: string): unknown => (source.globalValue ? source.globalValue(key) : source.get(key));
  // The reader for machine-scoped keys; passed to pick so a missing user value falls back to the default.

  const system = pick(
    'system',
    DEFAULT_SETTINGS.system,
    (v): v is string => isString(v) && v.trim().length > 0,
    'a preset name or a file path',
  ).trim();
  const lenses = { ...DEFAULT_SETTINGS.lenses };
  const lensesOn = pick('codeLens.enabled', true, isBool, 'true or false');
  for (const kind of LENS_KINDS) lenses[kind] = lensesOn && pick(`codeLens.${kind}`, true, isBool, 'true or false');

  const rules: Record<string, RuleSeverity> = {};
  const rawRules = source.get('diagnostics.rules');
  if (rawRules !== undefined && rawRules !== null) {
    if (typeof rawRules !== 'object' || Array.isArray(rawRules)) {
      problems.push({
        key: 'collectiveProfiler.diagnostics.rules',
        message: 'expected an object such as { "CP006": "off" }',
      });
    } else {
      for (const [code, severity] of Object.entries(rawRules)) {
        if (!RULE_CODE.test(code))
          problems.push({
            key: `collectiveProfiler.diagnostics.rules.${code}`,
            message: `"${code}" is not a rule code (CP001…CP008)`,
          });
        else if (!RULE_SEVERITIES.includes(severity as RuleSeverity))
          problems.push({
            key: `collectiveProfiler.diagnostics.rules.${code}`,
            message: `severity must be one of ${RULE_SEVERITIES.join(', ')}`,
          });
        else rules[code] = severity as RuleSeverity;
      }
    }
  }

  const bucketMB = pick('defaultBucketMB', 25, positive, 'a positive number of MB');
  const settings: Settings = {
    system,
    nodes: pick('nodes', 1, intIn(1, 65536), 'an integer from 1 to 65536'),
    ncclVersion: pick(
      'ncclVersion',
      '',
      (v): v is string => isString(v) && (v.trim() === '' || isNcclVersion(v)),
      'an NCCL release such as "2.26.2", or ""',
    ).trim(),
    defaultBucketBytes: Math.round(bucketMB * 1024 * 1024),
    traceDetail: pick(
      'trace.detail',
      'auto',
      (v): v is TraceDetail => TRACE_DETAILS.includes(v as TraceDetail),
      `one of ${TRACE_DETAILS.join(', ')}`,
    ),
    lenses,
    diagnostics: {
      enabled: pick('diagnostics.enabled', true, isBool, 'true or false'),
      debounceMs: pick('diagnostics.debounceMs', 300, intIn(0, 10_000), 'an integer from 0 to 10000'),
      rules,
      hints: pick('diagnostics.hints', false, isBool, 'true or false'),
    },
    native: {
      pythonPath: pick('native.pythonPath', '', isString, 'a path', machine).trim(),
      torchrunPath: pick('native.torchrunPath', '', isString, 'a path', machine).trim(),
      launcher: pick('native.launcher', 'direct', isLauncher, '"direct" or "torchrun"', machine),
      processes: pick('native.processes', 0, intIn(0, 1024), 'an integer from 0 to 1024'),
      timeoutSeconds: pick('native.timeoutSeconds', 300, intIn(5, 86_400), 'an integer from 5 to 86400'),
    },
  };
  return { settings, problems };
}

/** Setting keys (without the prefix) that the package manifest must declare; the manifest test checks both ways. */
export const SETTING_KEYS: readonly string[] = [
  'system',
  'nodes',
  'ncclVersion',
  'defaultBucketMB',
  'trace.detail',
  'codeLens.enabled',
  ...LENS_KINDS.map((k) => `codeLens.${k}`),
  'diagnostics.enabled',
  'diagnostics.debounceMs',
  'diagnostics.rules',
  'diagnostics.hints',
  'native.pythonPath',
  'native.torchrunPath',
  'native.launcher',
  'native.processes',
  'native.timeoutSeconds',
];
