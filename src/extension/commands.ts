// The command table: every command id in package.json maps to exactly one handler here (the manifest test checks
// both directions). Handlers get the shared context and the command's arguments; errors become one message with
// a "Show Log" button instead of an unhandled rejection.
import * as vscode from 'vscode';
import type { Ctx } from './context';
import { CancelledError } from './progress';
import { revealLineInTimeline } from './panels/reveal-line';
export type CommandHandler = (ctx: Ctx, ...args: unknown[]) => unknown;

/**
 * A handler that lives in the lazy bundle (src/extension/lazy.ts → dist/extension-lazy.js), loaded on the first
 * command. Activation then compiles and evaluates none of the handlers' dependencies (YAML, the schema validator,
 * the importers, the native runner, tree-sitter), which keeps it fast.
 */
type LazyModule = Awaited<ReturnType<typeof loadLazy>>;
const loadLazy = () => import('./lazy');

function lazy<K extends keyof LazyModule>(module: K, name: keyof LazyModule[K] & string): CommandHandler {
  return async (ctx, ...args) => {
    const loaded = await loadLazy();
    return (loaded[module][name] as unknown as CommandHandler)(ctx, ...args);
  };
}

export const COMMANDS = {
  'collectiveProfiler.profileTrainingConfig': lazy('training', 'profileTrainingConfig'),
  'collectiveProfiler.profileAllReduceAtCursor': lazy('collectives', 'profileAllReduceAtCursor'),
  'collectiveProfiler.sweepMessageSizes': lazy('collectives', 'sweepMessageSizes'),
  'collectiveProfiler.compareAlgorithms': lazy('collectives', 'compareAlgorithms'),
  'collectiveProfiler.sweepBucketSize': lazy('training', 'sweepBucketSize'),
  'collectiveProfiler.selectSystem': lazy('selectSystem', 'selectSystem'),
  'collectiveProfiler.openTrace': lazy('traceFiles', 'openTrace'),
  'collectiveProfiler.importMeasurements': lazy('measurements', 'importMeasurements'),
  'collectiveProfiler.exportTrace': lazy('traceFiles', 'exportTrace'),
  'collectiveProfiler.runOnThisMachine': lazy('native', 'runOnThisMachine'),
  'collectiveProfiler.checkGradientScalingInWorkspace': lazy('workspaceCheck', 'checkGradientScalingInWorkspace'),
  'collectiveProfiler.showLog': (ctx: Ctx) => ctx.log.show(true),
  'collectiveProfiler.compareWithModel': lazy('measurements', 'compareWithModel'),
  'collectiveProfiler.showScalingCheck': lazy('training', 'showScalingCheck'),
  'collectiveProfiler.showTopology': lazy('collectives', 'showTopology'),
  'collectiveProfiler.profileExample': lazy('training', 'profileExample'),
  'collectiveProfiler.revealInTimeline': (ctx: Ctx) => revealLineInTimeline(ctx),
} satisfies Record<string, CommandHandler>;

export type CommandId = keyof typeof COMMANDS;

export function registerCommands(ctx: Ctx): void {
  for (const [id, handler] of Object.entries(COMMANDS) as [CommandId, CommandHandler][]) {
    ctx.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        const started = Date.now();
        try {
          await handler(ctx, ...args);
          ctx.log.debug(`${id} finished in ${Date.now() - started} ms`);
        } catch (error) {
          reportError(ctx, id, error);
        }
      }),
    );
  }
}

/** A config or measurement error that knows where it happened (ConfigError, MeasurementParseError). */
interface PositionedError {
  readonly message: string;
  readonly line: number;
  readonly column: number;
  readonly file?: string;
}

function positioned(error: unknown): PositionedError | undefined {
  if (!(error instanceof Error)) return undefined;
  const e = error as Error & Partial<PositionedError>;
  return typeof e.line === 'number' && typeof e.column === 'number'
    ? { message: e.message, line: e.line, column: e.column, file: e.file }
    : undefined;
}

export function reportError(ctx: Ctx, id: string, error: unknown): void {
  // CancelledError has one class across the bundles (dist/extension-shared.js); an AbortError comes from Node's
  // AbortSignal, which throws a DOMException that is matched by its standard name.
  if (error instanceof CancelledError || (error instanceof Error && error.name === 'AbortError')) {
    ctx.log.info(`${id}: cancelled`);
    return;
  }
  const where = positioned(error);
  const message = where?.file
    ? `${vscode.workspace.asRelativePath(where.file)}:${where.line}:${where.column}: ${where.message}`
    : error instanceof Error
      ? error.message
      : String(error);
  ctx.log.error(`${id}: ${message}`);
  if (error instanceof Error && error.stack) ctx.log.debug(error.stack);
  const goToError = vscode.l10n.t('Go to Error');
  const showLog = vscode.l10n.t('Show Log');
  const actions = where?.file ? [goToError, showLog] : [showLog];
  void vscode.window.showErrorMessage(message, ...actions).then((choice) => {
    if (choice === showLog) ctx.log.show(true);
    if (choice === goToError && where?.file) {
      const position = new vscode.Position(Math.max(0, where.line - 1), Math.max(0, where.column - 1));
      void vscode.window.showTextDocument(vscode.Uri.file(where.file), {
        selection: new vscode.Range(position, position),
      });
    }
  });
}
