// The one typed protocol between the extension host and the webview panels (timeline, charts, topology).
// The host posts ToWebview messages; the webviews post FromWebview messages, and the host passes every one
// through validateWebviewMessage before any handler sees it, because a webview renders workspace data and
// must be treated as untrusted.
import {
  asMicros,
  type Algorithm,
  type Bytes,
  type GBps,
  type Micros,
  type Protocol,
  type SweepRow,
  type Trace,
  type TraceMetadata,
  type Lane,
  type Span,
  type Flow,
} from './engine/index';

export {
  WEBVIEW_STRINGS,
  WEBVIEW_STRINGS_ELEMENT_ID,
  formatWebviewString,
  readWebviewStrings,
  webviewStringsJson,
  type WebviewString,
  type WebviewStrings,
} from './protocol-strings';

/** The panels that speak this protocol. Each is one bundle in dist/webview/<panel>.js. */
export type PanelKind = 'timeline' | 'charts' | 'topology';
export const PANEL_KINDS: readonly PanelKind[] = ['timeline', 'charts', 'topology'];

// ---------------------------------------------------------------------------------------------------------
// Host → webview

/** A whole trace in one message. Where the trace came from lets the panel state survive a reload. */
export interface TraceMessage {
  readonly type: 'trace';
  readonly trace: Trace;
  /** The file or command the trace came from, kept in the panel state so the host can reload it. */
  readonly source?: TraceSource;
}

export interface TraceSource {
  /** A URI string the host understands, e.g. "file:///work/run.cptrace.json" or "untitled:profile-1". */
  readonly uri: string;
  readonly label: string;
}

/**
 * Large traces stream in three kinds of message, so no single message holds millions of spans:
 * traceBegin (metadata and lanes), any number of traceChunk (spans in order), then traceEnd.
 */
export interface TraceBeginMessage {
  readonly type: 'traceBegin';
  readonly metadata: TraceMetadata;
  readonly lanes: readonly Lane[];
  readonly totalSpans: number;
  readonly source?: TraceSource;
}
export interface TraceChunkMessage {
  readonly type: 'traceChunk';
  readonly spans: readonly Span[];
}
export interface TraceEndMessage {
  readonly type: 'traceEnd';
  /** The trace's flow arrows, indices into the spans sent in the chunks; sent last, once every span is there. */
  readonly flows?: readonly Flow[];
}

/** One labelled busbw-vs-size curve, e.g. the model's auto choice or one forced algorithm. */
export interface SweepSeries {
  readonly label: string;
  readonly rows: readonly SweepRow[];
}

/** Measured points (nccl-tests, a native run) overlaid on the model's curves. */
export interface MeasuredSeries {
  readonly label: string;
  readonly points: readonly { readonly bytes: Bytes; readonly timeUs: Micros; readonly busbwGBps: GBps }[];
}

/** Time per phase for one bucket or message size. */
export interface PhaseBreakdownRow {
  readonly label: string;
  readonly bytes: Bytes;
  readonly exchangeUs: Micros;
  readonly reduceUs: Micros;
  readonly broadcastUs: Micros;
}

/** One algorithm/protocol pair's time for the compared message size. */
export interface AlgorithmComparisonRow {
  readonly algorithm: Algorithm;
  readonly protocol: Protocol;
  readonly timeUs: Micros;
  readonly busbwGBps: GBps;
  /** True for the pair the tuner would pick. */
  readonly chosen?: boolean;
}

/** A training step's cost at one DDP/FSDP bucket size. */
export interface BucketSweepRow {
  readonly bucketBytes: Bytes;
  readonly stepTimeUs: Micros;
  /** Communication not hidden behind the backward pass. */
  readonly exposedCommUs: Micros;
  readonly recommended?: boolean;
}

/** How one collective scales as nodes are added. */
export interface NodeScalingRow {
  readonly nodes: number;
  readonly ranks: number;
  readonly timeUs: Micros;
  readonly busbwGBps: GBps;
}

/** The gradient-scaling check's loss curves: summed vs averaged gradients vs the single-GPU reference. */
export interface ScalingCheckCurves {
  readonly steps: readonly number[];
  readonly series: readonly {
    readonly label: string;
    readonly kind: 'sum' | 'avg' | 'reference' | 'other';
    readonly loss: readonly number[];
  }[];
  /** A one-line verdict shown above the chart, e.g. "summed gradients diverge 8× faster". */
  readonly verdict?: string;
  /** What the curves are of: the check's synthetic model, so nobody reads them as their own network's training. */
  readonly model: string;
}

export interface ChartsData {
  readonly title: string;
  readonly system?: string;
  readonly sweeps?: readonly SweepSeries[];
  readonly measured?: readonly MeasuredSeries[];
  readonly phases?: readonly PhaseBreakdownRow[];
  /** Message size the algorithm comparison was run at. */
  readonly comparisonBytes?: Bytes;
  readonly algorithms?: readonly AlgorithmComparisonRow[];
  readonly bucketSweep?: readonly BucketSweepRow[];
  /** The sweep's one recommendation in words, with its step time (the row marked recommended is the same size). */
  readonly bucketAdvice?: string;
  /** Facts shown as text cards above the charts: what an imported file holds and the hardware it ran on. */
  readonly notes?: readonly ChartsNote[];
  readonly nodeScaling?: readonly NodeScalingRow[];
  readonly scalingCheck?: ScalingCheckCurves;
  /** What a training profile or bucket sweep assumed, shown as a card whose values can be changed and re-run. */
  readonly assumptions?: TrainingAssumptions;
}

/** The values of a training run the charts panel lets the user change; an edit runs the profile or sweep again. */
export type AssumptionKey = 'model' | 'sequenceLength' | 'microBatchSize' | 'computeEfficiencyPct' | 'bucketMiB';
export const ASSUMPTION_KEYS: readonly AssumptionKey[] = [
  'model',
  'sequenceLength',
  'microBatchSize',
  'computeEfficiencyPct',
  'bucketMiB',
];

/** One value a run used, and where it came from: a config file, a default that filled a gap, or this panel. */
export interface AssumptionField {
  readonly key: AssumptionKey;
  /** A number, or for `model` the preset's name (or the name of the model a config.json describes). */
  readonly value: number | string;
  readonly origin: 'config' | 'default' | 'panel';
  /** For `model`: the presets the user may pick instead. */
  readonly choices?: readonly string[];
}

export interface TrainingAssumptions {
  /** Which command produced the panel, so the re-run is the same command. */
  readonly command: 'profile' | 'sweep';
  /** The config's file name. */
  readonly config: string;
  /**
   * The config's URI, so that a panel restored after a window reload can run the same command on it again
   * (checked by glue/charts-rerun.ts: the saved state is the webview's).
   */
  readonly configUri?: string;
  readonly fields: readonly AssumptionField[];
  /** The other defaults that filled gaps, in words; they change through the config files, not here. */
  readonly others: readonly string[];
}

/** Changed assumption values; absent keys keep what the run used. */
export interface TrainingChanges {
  readonly model?: string;
  readonly sequenceLength?: number;
  readonly microBatchSize?: number;
  readonly computeEfficiencyPct?: number;
  readonly bucketMiB?: number;
}

/** A titled list of lines, rendered as text (never as HTML). */
export interface ChartsNote {
  readonly title: string;
  readonly lines: readonly string[];
}

export interface ChartsMessage {
  readonly type: 'charts';
  readonly data: ChartsData;
}

/** The same vertex and link shapes as the engine's System.topology, repeated here so the protocol is self-contained. */
export type TopologyVertexKind = 'gpu' | 'switch' | 'nic' | 'cpu' | 'pcie-switch' | 'host';
export type TopologyLinkKind = 'nvlink' | 'nvswitch' | 'pcie' | 'inter-socket' | 'network' | 'host';
export interface TopologyVertex {
  readonly id: string;
  readonly kind: TopologyVertexKind;
  readonly label: string;
  readonly node: number;
}
export interface TopologyLink {
  readonly id: string;
  readonly from: string;
  readonly to: string;
  readonly GBps: GBps;
  readonly latencyUs: Micros;
  readonly kind: TopologyLinkKind;
}

/**
 * One channel's ring (vertex ids in ring order) or tree (parent → child edges between vertex ids); 'mesh' is the
 * one-shot algorithm, where every GPU sends to every other.
 */
export interface ChannelPath {
  readonly channel: number;
  readonly kind: 'ring' | 'tree' | 'mesh';
  readonly vertices: readonly string[];
  readonly edges?: readonly (readonly [string, string])[];
}

export interface TopologyData {
  /** e.g. "8× H100 NVSwitch". */
  readonly label: string;
  readonly vertices: readonly TopologyVertex[];
  readonly links: readonly TopologyLink[];
  /**
   * Utilisation per link id in [0, 1]. When absent and a trace is given, the webview computes it from the
   * trace's spans (bytes over each link against the link's bandwidth during the trace).
   */
  readonly utilisation?: Readonly<Record<string, number>>;
  readonly trace?: Trace;
  readonly channels?: readonly ChannelPath[];
}

export interface TopologyMessage {
  readonly type: 'topology';
  readonly data: TopologyData;
}

/** The colour theme changed; panels re-read the CSS variables and redraw. */
export interface ThemeMessage {
  readonly type: 'theme';
  readonly kind: 'light' | 'dark' | 'high-contrast' | 'high-contrast-light';
}

/** Reveal a time range in the timeline: the spans of a source line ("Reveal Line in Timeline" in the editor). */
export interface RevealMessage {
  readonly type: 'reveal';
  readonly startUs: Micros;
  readonly endUs: Micros;
}

/** The host could not produce what the panel shows; the panel keeps its old content and shows this. */
export interface ErrorMessage {
  readonly type: 'error';
  readonly message: string;
}

export type ToWebview =
  | TraceMessage
  | TraceBeginMessage
  | TraceChunkMessage
  | TraceEndMessage
  | ChartsMessage
  | TopologyMessage
  | ThemeMessage
  | RevealMessage
  | ErrorMessage;

// ---------------------------------------------------------------------------------------------------------
// Webview → host

export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';
export const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error'];

/** The panel's script has loaded and its listeners are in place; the host may post data now. */
export interface ReadyMessage {
  readonly type: 'ready';
  readonly panel: PanelKind;
}
/** Jump to the line a span came from. The host checks the file is in the workspace before opening it. */
export interface OpenSourceMessage {
  readonly type: 'openSource';
  readonly file: string;
  /** 1-based. */
  readonly line: number;
}
/**
 * The user selected a span (index into the trace's spans). The panel shows its details; the host opens its source
 * line when it has one (inside the workspace) and sums it up in the status bar. A selected time range needs no
 * message: the panel computes and shows its statistics itself, from the spans it holds.
 */
export interface SelectSpanMessage {
  readonly type: 'selectSpan';
  readonly spanIndex: number;
}
/** Export the shown trace as Chrome/Perfetto JSON. */
export interface ExportTraceMessage {
  readonly type: 'exportTrace';
}
/** A line for the extension's log output channel. */
export interface LogMessage {
  readonly type: 'log';
  readonly level: LogLevel;
  readonly message: string;
}

/** Run the charts panel's training profile or sweep again with changed assumptions (its Assumptions card). */
export interface RerunTrainingMessage {
  readonly type: 'rerunTraining';
  readonly changes: TrainingChanges;
}

export type FromWebview =
  ReadyMessage | OpenSourceMessage | SelectSpanMessage | ExportTraceMessage | LogMessage | RerunTrainingMessage;
export type FromWebviewType = FromWebview['type'];

// ---------------------------------------------------------------------------------------------------------
// Panel state, saved with the webview's setState and handed back to the host's WebviewPanelSerializer.

export interface TimelineState {
  readonly panel: 'timeline';
  readonly source?: TraceSource;
  readonly viewStartUs?: Micros;
  readonly viewEndUs?: Micros;
  readonly scrollTopPx?: number;
  readonly filter?: string;
  readonly selectedSpan?: number;
  /** Keys of the folded track groups ("node 1", "counters"), restored when the same trace is shown again. */
  readonly folded?: readonly string[];
  /** Lane ids of the pinned lanes. */
  readonly pinned?: readonly number[];
}
export interface ChartsState {
  readonly panel: 'charts';
  readonly data?: ChartsData;
  readonly tab?: string;
}
export interface TopologyState {
  readonly panel: 'topology';
  readonly data?: TopologyData;
  readonly channel?: number;
}
export type PanelState = TimelineState | ChartsState | TopologyState;

// ---------------------------------------------------------------------------------------------------------
// Validation of what a webview sends. Every field is checked, unknown types and unknown fields are rejected,
// and strings are bounded, so a compromised or buggy webview cannot make a handler misbehave.

/** Longest string accepted in any field (a path or a log line); longer means the message is rejected. */
export const MAX_STRING_LENGTH = 8192;

export type ValidationResult = FromWebview | { readonly error: string };

type Fields = Readonly<Record<string, (value: unknown) => string | undefined>>;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const text =
  (maxLength = MAX_STRING_LENGTH) =>
  (v: unknown): string | undefined =>
    typeof v !== 'string'
      ? 'must be a string'
      : v.length > maxLength
        ? `must be at most ${maxLength} characters`
        : undefined;
const nonEmptyText = (v: unknown): string | undefined =>
  text()(v) ?? ((v as string).length === 0 ? 'must not be empty' : undefined);
const integer =
  (min: number, max: number) =>
  (v: unknown): string | undefined =>
    typeof v !== 'number' || !Number.isInteger(v)
      ? 'must be an integer'
      : v < min || v > max
        ? `must be between ${min} and ${max}`
        : undefined;
const finiteNumber = (v: unknown): string | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? undefined : 'must be a finite number';
const oneOf =
  (allowed: readonly string[]) =>
  (v: unknown): string | undefined =>
    typeof v === 'string' && allowed.includes(v) ? undefined : `must be one of ${allowed.join(', ')}`;

/**
 * Bounds of each changeable assumption. The counts are the config layer's limits (docs/limits.md: sequenceLength,
 * batch, bucketMiB; test/unit/protocol.test.ts holds them equal), as a value typed in the panel is held to what a
 * config file may say. A model name is a preset's name: letters, digits, '.', '_' and '-'.
 */
export const ASSUMPTION_BOUNDS = {
  sequenceLength: { min: 1, max: 4_194_304, integer: true },
  microBatchSize: { min: 1, max: 1_048_576, integer: true },
  computeEfficiencyPct: { min: 0.1, max: 100, integer: false },
  bucketMiB: { min: 0.001, max: 1_048_576, integer: false },
} as const satisfies Record<Exclude<AssumptionKey, 'model'>, { min: number; max: number; integer: boolean }>;

const inRange =
  (bounds: { readonly min: number; readonly max: number; readonly integer: boolean }) =>
  (v: unknown): string | undefined =>
    bounds.integer
      ? integer(bounds.min, bounds.max)(v)
      : (finiteNumber(v) ??
        ((v as number) < bounds.min || (v as number) > bounds.max
          ? `must be between ${bounds.min} and ${bounds.max}`
          : undefined));

const CHANGE_FIELDS: Fields = {
  model: (v) =>
    text(64)(v) ??
    (/^[A-Za-z0-9._-]+$/.test(v as string) ? undefined : 'must be a preset name (letters, digits, . _ -)'),
  sequenceLength: inRange(ASSUMPTION_BOUNDS.sequenceLength),
  microBatchSize: inRange(ASSUMPTION_BOUNDS.microBatchSize),
  computeEfficiencyPct: inRange(ASSUMPTION_BOUNDS.computeEfficiencyPct),
  bucketMiB: inRange(ASSUMPTION_BOUNDS.bucketMiB),
};

/**
 * Checks changed assumptions (from the panel, or a command's argument): an object whose keys are assumption keys,
 * each optional and within its bounds. Returns the reason it is not, or undefined when it is.
 */
export function trainingChangesProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'must be an object';
  for (const key of Object.keys(value)) {
    if (!Object.prototype.hasOwnProperty.call(CHANGE_FIELDS, key))
      return `has an unexpected field "${key.slice(0, 64)}"`;
    const problem = CHANGE_FIELDS[key](value[key]);
    if (problem) return `field ${key} ${problem}`;
  }
  return undefined;
}

/** Required fields of each message type, besides `type`. No message has optional fields. */
const MESSAGE_FIELDS: Readonly<Record<FromWebviewType, Fields>> = {
  ready: { panel: oneOf(PANEL_KINDS) },
  openSource: { file: nonEmptyText, line: integer(1, 10_000_000) },
  selectSpan: { spanIndex: integer(0, 2 ** 32 - 1) },
  exportTrace: {},
  log: { level: oneOf(LOG_LEVELS), message: text() },
  rerunTraining: { changes: trainingChangesProblem },
};

/**
 * Checks a message from a webview against the protocol, field by field.
 * Returns the typed message, or `{error}` naming the first problem; never throws.
 */
export function validateWebviewMessage(message: unknown): ValidationResult {
  if (!isRecord(message)) return { error: 'message is not an object' };
  const type = message.type;
  if (typeof type !== 'string' || !Object.prototype.hasOwnProperty.call(MESSAGE_FIELDS, type)) {
    return {
      error: `unknown message type ${JSON.stringify(typeof type === 'string' ? type.slice(0, 64) : (type ?? null))}`,
    };
  }
  const fields = MESSAGE_FIELDS[type as FromWebviewType];
  for (const key of Object.keys(message)) {
    if (key !== 'type' && !Object.prototype.hasOwnProperty.call(fields, key))
      return { error: `${type}: unexpected field "${key.slice(0, 64)}"` };
  }
  for (const [key, check] of Object.entries(fields)) {
    if (!(key in message)) return { error: `${type}: missing field "${key}"` };
    const problem = check(message[key]);
    if (problem) return { error: `${type}.${key} ${problem}` };
  }
  return message as unknown as FromWebview;
}

/** True when validateWebviewMessage rejected the message. */
export function isValidationError(result: ValidationResult): result is { readonly error: string } {
  return 'error' in result;
}

/** Most entries a saved list (folded groups, pinned lanes) may hold; a trace drawn at the rank limit has fewer lanes. */
export const MAX_STATE_LIST = 100_000;

/** The valid entries of a saved list, or undefined when it is not an array or is longer than MAX_STATE_LIST. */
function boundedList<T>(value: unknown, entry: (v: unknown) => T | undefined): T[] | undefined {
  if (!Array.isArray(value) || value.length > MAX_STATE_LIST) return undefined;
  const out: T[] = [];
  for (const v of value as unknown[]) {
    const checked = entry(v);
    if (checked !== undefined) out.push(checked);
  }
  return out;
}

/**
 * Checks the state a serializer hands back after a reload (it was written by the webview, so it is untrusted).
 * Returns undefined for anything that is not a panel state; unknown or malformed optional fields are dropped.
 */
export function validatePanelState(state: unknown): PanelState | undefined {
  if (!isRecord(state) || typeof state.panel !== 'string' || !PANEL_KINDS.includes(state.panel as PanelKind))
    return undefined;
  const num = (v: unknown): number | undefined => (finiteNumber(v) === undefined ? (v as number) : undefined);
  const micros = (v: unknown): Micros | undefined => {
    const value = num(v);
    return value === undefined ? undefined : asMicros(value);
  };
  const str = (v: unknown): string | undefined => (text()(v) === undefined ? (v as string) : undefined);
  switch (state.panel as PanelKind) {
    case 'timeline': {
      const source =
        isRecord(state.source) && str(state.source.uri) && str(state.source.label) !== undefined
          ? { uri: state.source.uri as string, label: state.source.label as string }
          : undefined;
      const selected =
        integer(0, 2 ** 32 - 1)(state.selectedSpan) === undefined ? (state.selectedSpan as number) : undefined;
      // Fold keys are short names ("node 12"); lane ids are integers. Anything else in the lists is dropped, and a
      // list longer than any trace's lanes is refused whole.
      const folded = boundedList(state.folded, (v) => (text(64)(v) === undefined ? (v as string) : undefined));
      const pinned = boundedList(state.pinned, (v) =>
        integer(0, 2 ** 31 - 1)(v) === undefined ? (v as number) : undefined,
      );
      return {
        panel: 'timeline',
        source,
        viewStartUs: micros(state.viewStartUs),
        viewEndUs: micros(state.viewEndUs),
        scrollTopPx: num(state.scrollTopPx),
        filter: str(state.filter),
        selectedSpan: selected,
        folded,
        pinned,
      };
    }
    case 'charts':
      return {
        panel: 'charts',
        data: isRecord(state.data) ? (state.data as unknown as ChartsData) : undefined,
        tab: str(state.tab),
      };
    case 'topology':
      return {
        panel: 'topology',
        data: isRecord(state.data) ? (state.data as unknown as TopologyData) : undefined,
        channel: num(state.channel),
      };
  }
}
