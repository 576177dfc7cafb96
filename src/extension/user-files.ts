// The extension's reads of user files go through the one input reader's checks (src/native/files/input-file.ts):
// a FIFO, a device or a folder is refused instead of blocking the extension host, and a file over its kind's limit
// is refused before it is read. Files on other file systems (remote, virtual) are checked through VS Code's stat.
import * as vscode from 'vscode';
import { closeSync } from 'node:fs';
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
  if ((info.type & vscode.FileType.File) === 0) throw new UserFileError(`'${uri.toString()}' is not a regular file`);
  if (info.size > INPUT_LIMITS_BYTES[kind])
    throw new UserFileError(`'${uri.toString()}' is over the limit for ${kind} files (docs/limits.md)`);
  return info.size;
}

/** Reads a user file whole after checking it. */
export async function readUserFile(uri: vscode.Uri, kind: InputKind): Promise<Uint8Array> {
  await checkUserFile(uri, kind);
  return vscode.workspace.fs.readFile(uri);
}
