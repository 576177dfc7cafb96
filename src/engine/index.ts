// The engine's only public surface. Other layers import from here, never from files inside src/engine.
export * from './units';
export * from './collective-types';
export type { Phase, Lane, LaneKind, Span, Trace, TraceMetadata } from './trace/model';
export { PHASES } from './trace/model';
export { TraceBuilder } from './trace/builder';
export type { SystemSpec, IntraNodeFabric, NicSpec, SystemOverrides } from './topology/spec';
