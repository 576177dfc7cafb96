// The extension's reads of user files go through the one input reader's checks (src/native/files/input-file.ts):
// a FIFO, a device or a folder is refused instead of blocking the extension host, and a file over its kind's limit
// is refused before it is read. Files on other file systems (remote, virtual) are checked through VS Code's stat.
import * as vscode from 'vscode';
import { closeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { CancelledError } from './glue/cancel';
import { UserFileError } from '../native/files/file-errors';
import { INPUT_LIMITS_BYTES, openInput, type InputKind } from '../native/files/input-file';

/** Checks what `uri` is and how large; returns its size in bytes or throws a one-line UserFileError. */
export async function checkUserFile(uri: vscode.Uri, kind: InputKind): Promise<number> {
  if (uri.scheme === 'file') {
    const { fd, info } = openInput(uri.fsPath, { kind });
    closeSync(fd);
    return info.size;
  }
  const info = await vscode.workspace.fs.stat(uri);
  if ((info.type & vscode.FileType.File) === 0)
    throw new UserFileError(vscode.l10n.t("'{0}' is not a regular file", uri.toString()));
  if (info.size > INPUT_LIMITS_BYTES[kind])
    throw new UserFileError(
      vscode.l10n.t("'{0}' is over the limit for {1} files (docs/limits.md)", uri.toString(), kind),
    );
  return info.size;
}

/** Reads a user file whole after checking it. */
export async function readUserFile(uri: vscode.Uri, kind: InputKind): Promise<Uint8Array> {
  await checkUserFile(uri, kind);
  return vscode.workspace.fs.readFile(uri);
}

/** Pieces a file on disk is read in: each one a progress report and a chance to cancel. */
const READ_PIECE_BYTES = 4 * 1024 * 1024;

/**
 * Reads a user file whole after checking it, reporting the bytes read after each piece and stopping with
 * CancelledError when `signal` is aborted between pieces; nothing read is kept then. Files on other file systems
 * (remote, virtual) are read in one call and reported once.
 */
export async function readUserFileWithProgress(
  uri: vscode.Uri,
  kind: InputKind,
  signal: AbortSignal,
  onRead: (readBytes: number, sizeBytes: number) => void,
): Promise<Uint8Array> {
  const sizeBytes = await checkUserFile(uri, kind);
  throwIfAborted(signal);
  if (uri.scheme !== 'file') {
    const bytes = await vscode.workspace.fs.readFile(uri);
    onRead(bytes.length, sizeBytes);
    return bytes;
  }
  const handle = await open(uri.fsPath, 'r');
  try {
    const pieces: Buffer[] = [];
    let readBytes = 0;
    for (;;) {
      const piece = Buffer.allocUnsafe(READ_PIECE_BYTES);
      const { bytesRead } = await handle.read(piece, 0, piece.length, null);
      if (bytesRead === 0) break;
      readBytes += bytesRead;
      // The size checked above is a hint: a file that grows while it is read still stops at its kind's limit.
      if (readBytes > INPUT_LIMITS_BYTES[kind])
        throw new UserFileError(
          vscode.l10n.t("'{0}' grew past the limit for {1} files while it was read", uri.fsPath, kind),
        );
      pieces.push(piece.subarray(0, bytesRead));
      onRead(readBytes, sizeBytes);
      throwIfAborted(signal);
    }
    return Buffer.concat(pieces, readBytes);
  } finally {
    await handle.close();
  }
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new CancelledError();
}
