local labels = import 'labels.libsonnet';

function(replicas, image) [
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: std.extVar('app') + '-web', labels: labels.labels(std.extVar('app')) },
    spec: {
      replicas: replicas,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'web', image: image }] },
      },
    },
  },
  { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'replicas-' + replicas }, data: {} },
]
