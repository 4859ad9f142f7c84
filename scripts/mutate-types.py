#!/usr/bin/env python3
"""Type mutations of real cases (docs/security.md, "Case content is typed at load").

For PER_GROUP sampled cases of each group of SUITE, set every JSON pointer of the case body to
values of other types (string, "", 0, -1, 2^64, 1e300, 0.5, [], {}, null, true), load each
mutant alone (`hcpspec list`: exit 2 is a refusal at load, anything else but 0 is a defect),
then run every mutant that loads in one folder on the embedded reference and keep the result:
an `error` or `unimplemented` verdict there is case content that should have been refused at
load. Writes under $TMPDIR/hcpspec-mutate-SUITE[-SEED]/; summarise with --report.

    scripts/mutate-types.py SUITE PER_GROUP [SEED]      # SUITE: contract, harness-api, core-api, host
    scripts/mutate-types.py --report SUITE [SEED]
"""
import json, os, sys, shutil, subprocess, random, glob, re, collections, tempfile
import concurrent.futures as cf
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
H = os.path.join(ROOT, 'target/debug/hcpspec'); V = os.path.join(ROOT, 'vectors')
BODY = {'contract': 'steps', 'harness-api': 'scenario', 'core-api': 'script', 'host': 'host'}
MUTS = [("str", "x"), ("empty", ""), ("zero", 0), ("neg", -1), ("huge", 18446744073709551616),
        ("float", 1e300), ("frac", 0.5), ("arr", []), ("obj", {}), ("null", None), ("bool", True)]

def esc(k): return str(k).replace('~', '~0').replace('/', '~1')

def pointers(v, at=''):
    yield at, v
    if isinstance(v, dict):
        for k, x in v.items(): yield from pointers(x, f'{at}/{esc(k)}')
    elif isinstance(v, list):
        for i, x in enumerate(v): yield from pointers(x, f'{at}/{i}')

def setp(doc, ptr, val):
    parts = [p.replace('~1', '/').replace('~0', '~') for p in ptr.split('/')[1:]]
    cur = doc
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    last = parts[-1]
    if isinstance(cur, list): cur[int(last)] = val
    else: cur[last] = val

def same(a, b):
    return type(a) is type(b) and a == b

def skeleton(dst, suite):
    os.makedirs(dst)
    shutil.copy(f'{V}/denials.json', dst)
    for d in ['packs', 'schemas']:
        shutil.copytree(f'{V}/{d}', f'{dst}/{d}')
    os.makedirs(f'{dst}/{suite}')
    shutil.copy(f'{V}/{suite}/suite.json', f'{dst}/{suite}/')

def load_check(args):
    suite, path = args
    d = os.path.dirname(os.path.dirname(os.path.dirname(path)))
    p = subprocess.run([H, 'list', '--suite', suite, '--vectors', d], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stderr.strip()[:300]

def main(suite, per_group, seed=20):
    random.seed(seed)
    out = workdir(suite, seed)
    shutil.rmtree(out, ignore_errors=True)
    body = BODY[suite]
    groups = sorted(g for g in os.listdir(f'{V}/{suite}') if os.path.isdir(f'{V}/{suite}/{g}'))
    muts = []
    for g in groups:
        files = sorted(glob.glob(f'{V}/{suite}/{g}/*.json'))
        for f in random.sample(files, min(per_group, len(files))):
            case = json.load(open(f))
            for ptr, val in list(pointers(case[body], '/' + esc(body))):
                for name, m in MUTS:
                    if same(val, m): continue
                    if type(val) is type(m) and name not in ('empty', 'neg', 'huge', 'zero'): continue
                    muts.append((g, f, ptr, name, m))
    print(suite, len(muts), 'mutants', file=sys.stderr)
    # 1. load, one folder per mutant
    jobs = []
    for i, (g, f, ptr, name, m) in enumerate(muts):
        case = json.load(open(f))
        setp(case, ptr, m)
        case['id'] = f"{case['id']}-m{i}"
        d = f'{out}/load/{i}'
        os.makedirs(f'{d}/{suite}/{g}')
        os.symlink(f'{V}/denials.json', f'{d}/denials.json')
        os.symlink(f'{V}/packs', f'{d}/packs')
        os.symlink(f'{V}/{suite}/suite.json', f'{d}/{suite}/suite.json')
        p = f"{d}/{suite}/{g}/{case['id']}.json"
        json.dump(case, open(p, 'w'), indent=1)
        jobs.append((suite, p))
    with cf.ThreadPoolExecutor(2) as ex:
        loads = list(ex.map(load_check, jobs))
    rec = []
    skel = f'{out}/run'
    skeleton(skel, suite)
    ok = 0
    for (g, f, ptr, name, m), (suite_, p), (rc, err) in zip(muts, jobs, loads):
        r = dict(group=g, file=os.path.basename(f), ptr=ptr, mut=name, load_rc=rc, load_err=err, path=p)
        rec.append(r)
        if rc == 0:
            ok += 1
            os.makedirs(f'{skel}/{suite}/{g}', exist_ok=True)
            shutil.copy(p, f'{skel}/{suite}/{g}/')
        elif rc != 2:
            print('LOAD rc', rc, p, err, file=sys.stderr)
    print(suite, ok, 'loaded', file=sys.stderr)
    json.dump(rec, open(f'{out}/index.json', 'w'), indent=1)

def workdir(suite, seed):
    return os.path.join(tempfile.gettempdir(), f'hcpspec-mutate-{suite}' + (f'-{seed}' if seed != 20 else ''))

def run(suite, seed):
    out = workdir(suite, seed)
    subprocess.run([H, 'run', '--suite', suite, '--vectors', f'{out}/run', '--runtime', 'inproc:reference',
                    '--out', f'{out}/out', '--jobs', '2'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

def report(suite, seed):
    out = workdir(suite, seed)
    r = json.load(open(f'{out}/out/result.json'))
    idx = {x['path'].split('/')[-1][:-5]: x for x in json.load(open(f'{out}/index.json'))}
    c = collections.Counter(); ex = {}
    for cs in r['runtimes'][0]['cases']:
        if cs['verdict'] in ('error', 'unimplemented'):
            msg = re.sub(r'\d+', 'N', cs.get('message') or cs.get('reason') or '')[:150]
            c[msg] += 1
            x = idx.get(cs['name'].split('::')[-1], {})
            ex.setdefault(msg, (x.get('file'), x.get('ptr'), x.get('mut')))
    print(collections.Counter(x['verdict'] for x in r['runtimes'][0]['cases']))
    for m, n in c.most_common(60):
        print(n, m, ex[m])

if __name__ == '__main__':
    if sys.argv[1] == '--report':
        report(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 20)
    else:
        seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20
        main(sys.argv[1], int(sys.argv[2]), seed)
        run(sys.argv[1], seed)
        report(sys.argv[1], seed)
