// The protocol and engine types the panel code uses, gathered in one place for short import lines.
export type {
  PanelKind,
  ToWebview,
  FromWebview,
  ChartsData,
  TopologyData,
  PanelState,
  TraceSource,
} from '../../protocol';
export type { Trace } from '../../engine/index';
