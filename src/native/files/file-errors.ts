// The one error type for files the user names (inputs to read, outputs to write): its message is one line that
// says which file and why, and the CLI turns it into exit code 2 like any other bad input.

export class UserFileError extends Error {
  /** `reason` is the message without the file's name, for callers that name the file themselves. */
  constructor(
    message: string,
    readonly reason: string = message,
  ) {
    super(message);
    this.name = 'UserFileError';
  }
}

/** What kind of thing a non-regular path is, in the words of the error message. */
export function kindOfPath(info: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSocket(): boolean;
  isSymbolicLink(): boolean;
}): string {
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isSocket()) return 'a socket';
  if (info.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

/** The reason behind a failed file operation, in words rather than an errno name. */
export function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file or folder';
    case 'ENOTDIR':
      return 'a part of the path is not a folder';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'the filesystem is read-only';
    case 'ENOSPC':
      return 'the disk is full';
    case 'EDQUOT':
      return 'the disk quota is exceeded';
    case 'EISDIR':
      return 'it is a folder';
    case 'ENAMETOOLONG':
      return 'the name is too long';
    case 'ELOOP':
      return 'too many symbolic links';
    case 'ENXIO':
      return 'no device or peer behind it (a socket, or a device that is not there)';
    case 'EIO':
      return 'an I/O error';
    case 'EMFILE':
    case 'ENFILE':
      return 'too many open files';
    default:
      return error instanceof Error ? error.message.split('\n')[0] : String(error);
  }
}
