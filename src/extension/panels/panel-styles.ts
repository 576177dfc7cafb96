// The panels' CSS, inlined into each page under the page's nonce. Colours come only from VS Code's theme
// variables so every panel follows the user's theme, including high contrast.
import type { PanelKind } from '../../protocol';

const common = `
html, body { height: 100%; margin: 0; padding: 0; overflow: hidden; }
body { color: var(--vscode-foreground); background: var(--vscode-editor-background);
  font-family: var(--vscode-font-family); font-size: var(--vscode-font-size, 13px); }
#app { display: flex; flex-direction: column; height: 100%; }
.toolbar { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 8px; padding: 6px 8px; flex: none;
  border-bottom: 1px solid var(--vscode-panel-border, transparent); }
.toolbar .title { font-weight: 600; margin-right: auto; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.muted { color: var(--vscode-descriptionForeground); }
.message { padding: 16px; color: var(--vscode-descriptionForeground); }
.message.error { color: var(--vscode-errorForeground); }
.legend { display: flex; gap: 10px; flex-wrap: wrap; }
.legend .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; vertical-align: middle; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0; }
dl.facts dt { color: var(--vscode-descriptionForeground); }
dl.facts dd { margin: 0; font-family: var(--vscode-editor-font-family); overflow-wrap: anywhere; }
a.source { color: var(--vscode-textLink-foreground); cursor: pointer; text-decoration: underline; }
`;

const timeline = `
.range-label { white-space: nowrap; }
.timeline-legend { flex: none; padding: 0 8px 4px; font-size: 11px; }
.overview { flex: none; height: 36px; width: 100%; display: block; cursor: pointer;
  border-bottom: 1px solid var(--vscode-panel-border, transparent); }
.lanes-wrap { position: relative; flex: 1; min-height: 0; }
.lanes { position: absolute; inset: 0; width: 100%; height: 100%; display: block; cursor: grab; outline: none; }
.lanes:focus-visible { outline: 1px solid var(--vscode-focusBorder); outline-offset: -1px; }
.tooltip { position: absolute; pointer-events: none; z-index: 2; max-width: 420px; padding: 6px 8px;
  background: var(--vscode-editorHoverWidget-background); color: var(--vscode-editorHoverWidget-foreground);
  border: 1px solid var(--vscode-editorHoverWidget-border); font-size: 12px; }
.tooltip[hidden] { display: none; }
.tooltip .name { font-weight: 600; margin-bottom: 4px; overflow-wrap: anywhere; }
.details { flex: none; max-height: 30%; overflow: auto; padding: 6px 8px; display: flex; gap: 24px;
  border-top: 1px solid var(--vscode-panel-border, transparent); }
.details section { min-width: 240px; }
.details h3 { margin: 0 0 4px; font-size: 12px; text-transform: uppercase; color: var(--vscode-descriptionForeground); }
.aggregate table { border-collapse: collapse; font-size: 12px; }
.aggregate th { text-align: left; font-weight: 600; padding: 0 8px 2px 0; color: var(--vscode-descriptionForeground); }
.aggregate td { padding: 1px 8px 1px 0; white-space: nowrap; }
.aggregate td.name { max-width: 260px; overflow: hidden; text-overflow: ellipsis; }
.aggregate td.num { text-align: right; font-variant-numeric: tabular-nums; }
.aggregate .bar { display: inline-block; height: 8px; background: var(--vscode-charts-blue); vertical-align: middle; }
.flame { flex: 1 1 320px; min-width: 320px; }
.flame-head { display: flex; align-items: baseline; gap: 8px; }
.flame-reset { font: inherit; font-size: 12px; padding: 1px 8px; cursor: pointer; border: none;
  color: var(--vscode-button-secondaryForeground); background: var(--vscode-button-secondaryBackground); }
.flame-reset[hidden] { display: none; }
.flame-wrap { position: relative; }
.flame-canvas { display: block; width: 100%; cursor: pointer; }
.flame-tip { position: absolute; pointer-events: none; z-index: 2; padding: 4px 6px; font-size: 12px; white-space: nowrap;
  background: var(--vscode-editorHoverWidget-background); color: var(--vscode-editorHoverWidget-foreground);
  border: 1px solid var(--vscode-editorHoverWidget-border); }
.flame-tip[hidden] { display: none; }
.flows a { cursor: pointer; color: var(--vscode-textLink-foreground); }
`;

// auto-fit, not auto-fill: columns no card occupies collapse, so two charts in a wide panel share its width instead
// of leaving a third of it empty.
const charts = `
.grid { flex: 1; overflow: auto; display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr));
  gap: 12px; padding: 12px; align-content: start; }
.card { border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border, transparent)); padding: 8px; }
.card h2 { font-size: 13px; margin: 0 0 6px; }
.card .verdict { margin: 0 0 6px; color: var(--vscode-descriptionForeground); }
.card .plot { position: relative; height: 280px; }
.card.assumptions { grid-column: 1 / -1; }
.card h3 { font-size: 12px; margin: 8px 0 2px; color: var(--vscode-descriptionForeground); }
/* The controls' column never goes below what a control needs to show its value (a select: its longest option); the
   labels' column gives way instead and wraps between words, so a half-width panel reads the whole model name. */
.assumption-fields { display: grid; grid-template-columns: minmax(8em, max-content) minmax(max-content, 220px)
  max-content; gap: 4px 10px; align-items: center; }
.assumption-fields input, .assumption-fields select { font: inherit; padding: 2px 4px;
  color: var(--vscode-input-foreground); background: var(--vscode-input-background);
  border: 1px solid var(--vscode-input-border, var(--vscode-panel-border, transparent)); }
.assumption-fields input:focus, .assumption-fields select:focus { outline: 1px solid var(--vscode-focusBorder); }
.origin { font-size: 11px; color: var(--vscode-descriptionForeground); }
.origin-default { color: var(--vscode-editorWarning-foreground, var(--vscode-descriptionForeground)); }
.origin-panel { color: var(--vscode-textLink-foreground); }
.assumption-actions { display: flex; align-items: center; gap: 10px; margin-top: 8px; }
.assumption-actions button { font: inherit; padding: 3px 12px; cursor: pointer; border: none;
  color: var(--vscode-button-foreground); background: var(--vscode-button-background); }
.assumption-actions button:hover { background: var(--vscode-button-hoverBackground); }
.assumption-actions button:disabled { opacity: 0.6; cursor: default; }
.assumption-status { margin: 0; color: var(--vscode-descriptionForeground); }
.assumption-status.error { color: var(--vscode-errorForeground); }
`;

const topology = `
.topology-wrap { position: relative; flex: 1; min-height: 0; }
.topology { position: absolute; inset: 0; width: 100%; height: 100%; display: block; }
.tooltip { position: absolute; pointer-events: none; padding: 4px 6px; font-size: 12px;
  background: var(--vscode-editorHoverWidget-background); color: var(--vscode-editorHoverWidget-foreground);
  border: 1px solid var(--vscode-editorHoverWidget-border); }
.tooltip[hidden] { display: none; }
`;

export const PANEL_STYLES: Readonly<Record<'common' | PanelKind, string>> = { common, timeline, charts, topology };
