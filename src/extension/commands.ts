// The command table: every command id in package.json maps to exactly one handler here (the manifest test checks
// both directions). Handlers get the shared context and the command's arguments; errors become one message with
// a "Show Log" button instead of an unhandled rejection.
import * as vscode from 'vscode';
import type { Ctx } from './context';
import { CancelledError } from './progress';
import { profileTrainingConfig, profileExample, sweepBucketSize, showScalingCheck } from './handlers/training';
import { profileAllReduceAtCursor, sweepMessageSizes, compareAlgorithms, showTopology } from './handlers/collectives';
import { selectSystem } from './handlers/select-system';
import { openTrace, exportTrace } from './handlers/trace-files';
import { importMeasurements, compareWithModel } from './handlers/measurements';
import { runOnThisMachine } from './handlers/native';
import { checkGradientScalingInWorkspace } from './handlers/workspace-check';

export type CommandHandler = (ctx: Ctx, ...args: unknown[]) => unknown;

export const COMMANDS = {
  'collectiveProfiler.profileTrainingConfig': profileTrainingConfig,
  'collectiveProfiler.profileAllReduceAtCursor': profileAllReduceAtCursor,
  'collectiveProfiler.sweepMessageSizes': sweepMessageSizes,
  'collectiveProfiler.compareAlgorithms': compareAlgorithms,
  'collectiveProfiler.sweepBucketSize': sweepBucketSize,
  'collectiveProfiler.selectSystem': selectSystem,
  'collectiveProfiler.openTrace': openTrace,
  'collectiveProfiler.importMeasurements': importMeasurements,
  'collectiveProfiler.exportTrace': exportTrace,
  'collectiveProfiler.runOnThisMachine': runOnThisMachine,
  'collectiveProfiler.checkGradientScalingInWorkspace': checkGradientScalingInWorkspace,
  'collectiveProfiler.showLog': (ctx: Ctx) => ctx.log.show(true),
  'collectiveProfiler.compareWithModel': compareWithModel,
  'collectiveProfiler.showScalingCheck': showScalingCheck,
  'collectiveProfiler.showTopology': showTopology,
  'collectiveProfiler.profileExample': profileExample,
} satisfies Record<string, CommandHandler>;

export type CommandId = keyof typeof COMMANDS;

export function registerCommands(ctx: Ctx): void {
  for (const [id, handler] of Object.entries(COMMANDS) as [CommandId, CommandHandler][]) {
    ctx.push(vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      const started = Date.now();
      try {
        await handler(ctx, ...args);
        ctx.log.debug(`${id} finished in ${Date.now() - started} ms`);
      } catch (error) {
        reportError(ctx, id, error);
      }
    }));
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
  return typeof e.line === 'number' && typeof e.column === 'number' ? { message: e.message, line: e.line, column: e.column, file: e.file } : undefined;
}

export function reportError(ctx: Ctx, id: string, error: unknown): void {
  if (error instanceof CancelledError || (error instanceof Error && error.name === 'AbortError')) {
    ctx.log.info(`${id}: cancelled`);
    return;
  }
  const where = positioned(error);
  const message = where?.file ? `${vscode.workspace.asRelativePath(where.file)}:${where.line}:${where.column}: ${where.message}` : error instanceof Error ? error.message : String(error);
  ctx.log.error(`${id}: ${message}`);
  if (error instanceof Error && error.stack) ctx.log.debug(error.stack);
  const actions = where?.file ? ['Go to Error', 'Show Log'] : ['Show Log'];
  void vscode.window.showErrorMessage(message, ...actions).then((choice) => {
    if (choice === 'Show Log') ctx.log.show(true);
    if (choice === 'Go to Error' && where?.file) {
      const position = new vscode.Position(Math.max(0, where.line - 1), Math.max(0, where.column - 1));
      void vscode.window.showTextDocument(vscode.Uri.file(where.file), { selection: new vscode.Range(position, position) });
    }
  });
}
