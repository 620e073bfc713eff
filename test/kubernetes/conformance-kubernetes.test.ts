import t from 'tap';
import { KubeConfig } from '../../src/store/kubernetes/client-node.js';
import { KubernetesStore } from '../../src/store/kubernetes/kubernetes-store.js';
import { FakeApiServer } from '../fake-api-server/fake-api-server.js';
import { runConformance } from '../store/conformance/cases.js';

// The ResourceStore conformance cases against the Kubernetes backend (the real client-node)
// over HTTP to the fake API server; its historySize is the watch cache's window.
runConformance(t, {
  async open(t, options = {}) {
    const server = await FakeApiServer.start(options);
    t.teardown(() => server.close());
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions(server.kubeConfig());
    return new KubernetesStore({ kubeConfig, qps: 1000, burst: 1000, fieldManager: 'conformance' });
  },
});
