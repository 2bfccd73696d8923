import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** What a service knows about itself to explain a failed start: its port settings and database. */
export interface StartupSettings {
  /** The variables that set a port this service listens on, with their values (`{ PORT: 3000 }`). */
  ports: Record<string, number>;
  /** DATABASE_URL, when the service has a database. */
  databaseUrl?: string;
}

/**
 * A sentence saying what to do about an error that stopped a service's start, for the two
 * mistakes a newcomer makes most: a port already taken (often by an `npm start` still running)
 * and a database that does not exist yet. Anything else: undefined, and the error speaks alone.
 */
export function explainStartupFailure(error: unknown, settings: StartupSettings): string | undefined {
  const { code, port } = (error ?? {}) as { code?: unknown; port?: unknown };
  if (code === 'EADDRINUSE' && typeof port === 'number') return portInUse(port, settings.ports);
  if (code === '3D000' && settings.databaseUrl) return missingDatabase(settings.databaseUrl);
  return undefined;
}

function portInUse(port: number, ports: Record<string, number>): string {
  const variable = Object.keys(ports).find((name) => ports[name] === port) ?? 'its port setting';
  return portInUseMessage(port, `set ${variable} to a free port`);
}

/** Port `port` is taken: by whom, and what to do besides stopping it (`remedy`). */
export function portInUseMessage(port: number, remedy: string): string {
  const holder = processListeningOn(port);
  const ours = holder && /services\/\w+\/src\/main|scripts\/start/.test(holder.command);
  const who = holder
    ? ` by process ${holder.pid} (${holder.command})${ours ? ': another `npm start` of this project, still running' : ''}`
    : ` (\`ss -ltnp 'sport = :${port}'\` or \`lsof -i :${port}\` names the process)`;
  return `port ${port} is already in use${who}: stop it, or ${remedy}.`;
}

function missingDatabase(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.slice(1));
  const options = [
    `-h ${url.hostname}`,
    `-p ${url.port || '5432'}`,
    url.username ? `-U ${decodeURIComponent(url.username)}` : '',
  ].filter(Boolean);
  return (
    `database "${name}" does not exist on ${url.hostname}:${url.port || '5432'}: create it with ` +
    `\`createdb ${options.join(' ')} ${name}\`, or set DATABASE_URL to one that exists.`
  );
}

/**
 * The process listening on a TCP port of this machine, read from /proc (Linux; undefined
 * elsewhere, or when the process belongs to another user).
 */
export function processListeningOn(port: number): { pid: number; command: string } | undefined {
  try {
    const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
    const inodes = new Set<string>();
    for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
      for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
        const fields = line.trim().split(/\s+/);
        // local_address is ADDR:PORT in hex; state 0A is LISTEN; field 9 is the socket's inode.
        if (fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A') inodes.add(fields[9]);
      }
    }
    if (inodes.size === 0) return undefined;
    for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      let descriptors: string[];
      try {
        descriptors = readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of descriptors) {
        let target: string;
        try {
          target = readlinkSync(`/proc/${pid}/fd/${fd}`);
        } catch {
          continue;
        }
        const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
        if (inode && inodes.has(inode)) {
          const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
          return { pid: Number(pid), command };
        }
      }
    }
  } catch {
    // Not Linux, or /proc not readable: the message falls back to naming the tools.
  }
  return undefined;
}
