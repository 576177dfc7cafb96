// The table of CLI subcommands. Each lives in its own file; add one line here to register it.
import type { CliCommand } from '../command';
import { verifyCommand } from './verify';

export const COMMANDS: CliCommand[] = [verifyCommand];
