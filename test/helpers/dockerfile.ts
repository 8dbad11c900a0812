/**
 * Reads a Dockerfile into its stages, for tests that run its steps without a Docker engine: each
 * stage's working directory, `COPY` (from the build context or another stage), `RUN`, `ENV`,
 * `USER`, `VOLUME`, `ENTRYPOINT` and `CMD`. Only what Keel's Dockerfile uses; anything else is an error,
 * so a new instruction cannot slip past the test that runs this file.
 */
export type DockerStep =
  { kind: 'copy'; from?: string; sources: string[]; destination: string } | { kind: 'run'; command: string };

export interface DockerStage {
  name: string;
  base: string;
  workdir: string;
  steps: DockerStep[];
  env: Record<string, string>;
  volumes: string[];
  /** Who the stage's processes run as (`USER`). @default 'root' */
  user: string;
  entrypoint: string[];
  cmd: string[];
}

/** Instructions joined across `\` line ends, comments and blank lines dropped. */
function instructions(text: string): string[] {
  const joined = text.replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

function words(text: string): string[] {
  return text.split(/\s+/).filter((word) => word !== '');
}

export function parseDockerfile(text: string): DockerStage[] {
  const stages: DockerStage[] = [];
  for (const line of instructions(text)) {
    const [keyword = '', ...rest] = words(line);
    const argument = line.slice(keyword.length).trim();
    if (keyword === 'FROM') {
      const [base = '', as, name] = rest;
      stages.push({
        name: as?.toUpperCase() === 'AS' && name !== undefined ? name : String(stages.length),
        base,
        workdir: '/',
        steps: [],
        env: {},
        volumes: [],
        user: 'root',
        entrypoint: [],
        cmd: [],
      });
      continue;
    }
    const stage = stages.at(-1);
    if (stage === undefined) throw new Error(`Dockerfile: ${keyword} before FROM`);
    switch (keyword) {
      case 'WORKDIR':
        stage.workdir = argument;
        break;
      case 'COPY': {
        const from = rest.find((word) => word.startsWith('--from='))?.slice('--from='.length);
        const paths = rest.filter((word) => !word.startsWith('--'));
        if (paths.length < 2 || rest.some((word) => word.startsWith('--') && !word.startsWith('--from=')))
          throw new Error(`Dockerfile: a COPY this reader does not know: ${line}`);
        stage.steps.push({
          kind: 'copy',
          ...(from === undefined ? {} : { from }),
          sources: paths.slice(0, -1),
          destination: paths.at(-1)!,
        });
        break;
      }
      case 'RUN':
        stage.steps.push({ kind: 'run', command: argument });
        break;
      case 'ENV':
        for (const pair of rest) {
          const [key = '', ...value] = pair.split('=');
          stage.env[key] = value.join('=');
        }
        break;
      case 'USER':
        stage.user = argument;
        break;
      case 'VOLUME':
        stage.volumes.push(...rest);
        break;
      case 'ENTRYPOINT':
        stage.entrypoint = JSON.parse(argument) as string[];
        break;
      case 'CMD':
        stage.cmd = JSON.parse(argument) as string[];
        break;
      default:
        throw new Error(`Dockerfile: an instruction this reader does not know: ${line}`);
    }
  }
  return stages;
}
