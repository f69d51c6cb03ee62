import { HumanDuration } from '@backstage/types';

export interface Config {
  /** Configuration of the Fleet plugins. */
  fleet?: {
    /** Where clusters are discovered from. */
    discovery?: {
      /**
       * One kubeconfig file; every context in it is a cluster. Env: KUBECONFIG_PATH.
       */
      kubeconfigPath?: string;
      /**
       * A directory; every readable kubeconfig file in it is read. Env: KUBECONFIG_DIR.
       */
      kubeconfigDir?: string;
      /**
       * Directories a manually registered cluster's kubeconfigRef may point into (besides the
       * two above). A reference outside them is stored as opaque and never opened.
       */
      allowedKubeconfigDirs?: string[];
      /**
       * Whether the kubeconfig of a manually registered cluster may run an `exec` credential
       * plugin (a program on the backend's host). Discovered kubeconfigs may (EKS and GKE need
       * it); manual references are refused unless this is true. Default false.
       */
      allowExecForManual?: boolean;
      /**
       * A label selector (e.g. `cnp.io/kubeconfig=true`): every Secret of the hub cluster with
       * these labels holds a kubeconfig (key `kubeconfig`, else `value`) whose contexts are
       * discovered as clusters, with `kubeconfigRef: secret:<namespace>/<name>[#key]`. A manual
       * `secret:` reference is read only for a Secret with these labels (in `secretNamespace`
       * when set); without a selector, no Secret reference is read. A Secret's kubeconfig may
       * name no file (token-file, client-certificate, client-key, certificate-authority) and run
       * no exec or auth-provider plugin.
       */
      secretSelector?: string;
      /**
       * The namespace those Secrets are listed in, and the only one a manual `secret:` reference
       * may name (default: every namespace).
       */
      secretNamespace?: string;
    };
    /**
     * The hub cluster: where `secret:<namespace>/<name>[#key]` kubeconfig references are read.
     * By default, when the backend runs in a pod (`KUBERNETES_SERVICE_HOST` is set) and no
     * kubeconfig is configured, the cluster it runs in, through its service account.
     */
    hub?: {
      /** A kubeconfig file for the hub (instead of in-cluster config). */
      kubeconfigPath?: string;
      /** The context of that file (default: its current context). */
      context?: string;
      /**
       * Use in-cluster config (the pod's service account) for the hub. Default: true when
       * `KUBERNETES_SERVICE_HOST` is set and no kubeconfig is configured.
       */
      inCluster?: boolean;
      /** The name the cluster the backend runs in is registered under (default `in-cluster`). */
      inClusterName?: string;
      /** Whether that cluster is registered as a Fleet cluster (default true). */
      registerInCluster?: boolean;
      /**
       * A prefix before `/var/run/secrets/kubernetes.io/serviceaccount`, where in-cluster config
       * reads the token, CA and namespace (default none; for tests and unusual mounts).
       */
      serviceAccountPathPrefix?: string;
    };
    /** The cluster health worker. */
    health?: {
      /** Time between two health cycles (default 300 s). Env: CLUSTER_HEALTH_INTERVAL, in seconds. */
      interval?: HumanDuration;
      /** Consecutive failed probes that confirm an outage (default 2). Env: CLUSTER_HEALTH_FAILURE_THRESHOLD. */
      failureThreshold?: number;
      /**
       * How long an outage must have lasted, since the first of its consecutive failed probes,
       * to be confirmed (default: one `interval`). An outage needs both: `failureThreshold`
       * failures in a row and this long, so a short blip probed again and again (manual runs)
       * never makes a cluster OFFLINE. Zero confirms on the count alone.
       */
      minOutage?: HumanDuration | string;
      /**
       * Manual runs (`POST /health/run`) are at most one per this duration (default 10 s): one
       * asked sooner after the last cycle answers that cycle's summary, marked `reused`, without
       * probing. Callers during a run share its result. Zero lets each manual run probe.
       */
      manualMinInterval?: HumanDuration | string;
      /** Consecutive successful probes that bring an OFFLINE cluster back ONLINE (default 1). */
      recoveryThreshold?: number;
      /** Timeout of one probe (default 5 s). */
      probeTimeout?: HumanDuration;
      /**
       * How many clusters are probed at once (default 16). A cycle takes about
       * ceil(unreachable / concurrency) × probeTimeout: a fleet of ~1,000 clusters wants 64.
       */
      concurrency?: number;
      /** The brake on mass false degradation. */
      massOutage?: {
        /** Minimum number of clusters newly going OFFLINE in one cycle (default 3). */
        minClusters?: number;
        /** Minimum fraction of probeable clusters newly going OFFLINE in one cycle (default 0.55). */
        fraction?: number;
      };
      /**
       * Splits the clusters into this many shards (default 1: one replica probes every cluster
       * each cycle). Above 1, each replica probes, reconciles and watches the clusters of the
       * shards it holds, a fair share of them; the shards of a replica that stops are taken over within one
       * `shardLease`. Cascades of clusters newly OFFLINE then wait one cycle, for the
       * mass-outage guard counted over the whole fleet.
       */
      shards?: number;
      /** How long a replica holds a shard without renewing it (default 30 s, at least 1 s); with `shards` above 1. */
      shardLease?: HumanDuration | string;
    };
    /** Clusters registered by hand (`POST /clusters`). */
    clusters?: {
      /**
       * The most manually registered clusters Fleet keeps (default 1,000; 0 refuses every
       * manual registration). One more is refused with 409 until one is removed.
       */
      maxManual?: number;
    };
    /** Drift detection, self-healing and placement by cluster labels. */
    reconcile?: {
      /** Time between two reconciles (default 60 s). */
      interval?: HumanDuration;
      /** How many deployments are read at once (default 8). */
      concurrency?: number;
      /**
       * Keep the live state of every ONLINE cluster from watches (default true): a deployment is
       * compared when one of its objects changes, and all of them every `resyncInterval`.
       * false: every run reads every deployment's objects.
       */
      watch?: boolean;
      /** With `watch`, how often a run still compares every deployment (default 10 minutes). */
      resyncInterval?: HumanDuration | string;
    };
    /**
     * Projects: what each team's components may make Fleet touch. A component belongs to the
     * first project whose `owners` holds its catalog owner; a component of no project may not be
     * deployed. Without this list, one built-in project `default` holds every component: the
     * namespace `deploy.namespace`, Secrets and ConfigMaps named `<application name>-*`, no
     * Ingress host, every cluster, pods of manifests at `baseline` pod security. Patterns take
     * `*` (any run of characters) and `{app}` (the application's name); system namespaces are
     * never allowed.
     */
    projects?: Array<{
      /** A DNS-1123 label, named in refusals (`namespace 'x' is not in project payments`). */
      name: string;
      /** Entity refs of owners; one without a kind is a group of the `default` namespace. */
      owners: string[];
      /** The clusters it may use, by name and/or label selector (default: every cluster). */
      clusters?: { names?: string[]; selector?: string };
      /** Namespace patterns; Fleet creates only a namespace named exactly (no `*`). */
      namespaces: string[];
      /** Secret and ConfigMap name patterns for env references and Ingress TLS (default `{app}-*`). */
      secrets?: string[];
      /** Ingress host patterns (`*.payments.example.com`); a host itself is never a wildcard. */
      ingressHosts?: string[];
      /**
       * URL patterns its components' own manifests may be read from
       * (`https://github.com/acme/payments-*`; a URL without `*` also holds what is below it).
       * Unset: any URL the portal's integrations can read.
       */
      sources?: string[];
      /** Kinds of manifests it may apply (default: Fleet's namespaced kinds). */
      kinds?: { allow?: string[]; deny?: string[] };
      /**
       * The Kubernetes Pod Security Standards level the pod templates of its components'
       * manifests must meet (default `baseline`): `baseline` refuses host namespaces, privileged
       * containers, added capabilities beyond the default set, hostPath volumes, host ports and
       * the like; `restricted` also requires non-root, no privilege escalation, a seccomp profile,
       * every capability dropped and core volume types only; `privileged` checks nothing. Fleet's
       * generated workload is not checked (it meets `baseline`).
       */
      podSecurity?: 'baseline' | 'restricted' | 'privileged';
    }>;
    /** Deploying applications. */
    deploy?: {
      /** Target namespace (default `default`). Env: K8S_TARGET_NAMESPACE. */
      namespace?: string;
      /** Replicas when the application does not say (default 3). */
      defaultReplicas?: number;
      /** How long a rollout may take before it is FAILED (default 600 s). */
      progressDeadline?: HumanDuration;
      /** How often a rollout in progress is checked (default 2 s). */
      pollInterval?: HumanDuration;
      /**
       * A revision that fails its rollout (or turns DEGRADED / WORKLOAD_UNHEALTHY) within this
       * long of being applied is rolled back to the last DEPLOYED one (default 10 minutes),
       * unless the application sets `spec.autoRollback: false`.
       */
      rollbackWindow?: HumanDuration;
      /**
       * Namespaces no application may name in `spec.namespace` (default kube-system,
       * kube-public, kube-node-lease).
       */
      forbiddenNamespaces?: string[];
      /**
       * Requests and limits of every container, for each resource (`cpu`, `memory`) the
       * application sets neither a request nor a limit for (default: requests `cpu: 100m`,
       * `memory: 128Mi`, limits `cpu: 200m`, `memory: 256Mi`). Set, it replaces the default
       * as a whole (`{}`: none). An application's `resources: {}` opts out. A request above
       * its limit stops the backend at startup.
       */
      defaultResources?: {
        requests?: { cpu?: string; memory?: string };
        limits?: { cpu?: string; memory?: string };
      };
      /**
       * How long a stopping container keeps serving (a `preStop` sleep, whole seconds, at most
       * 5 minutes; default 5 s; zero leaves the hook out), so endpoints and Ingress controllers
       * stop sending it traffic first. Uses the `sleep` action on clusters at Kubernetes 1.30
       * or later, and an `exec` of `sleep` (the image needs a `sleep` binary) below 1.30 or
       * while a cluster's version is not known.
       */
      preStopSleep?: HumanDuration | string;
    };
    /** The history of cluster and deployment status changes. */
    events?: {
      /**
       * How long events are kept (default 90 days): once a day, older ones are removed. A
       * duration such as `{ days: 90 }`, `90d` or `P90D`; it must be positive.
       */
      retention?: HumanDuration | string;
    };
    /** Backstage signals: the cards and the fleet page refresh as soon as a status changes. */
    signals?: {
      /**
       * Whether Fleet publishes a signal for every committed status change of a cluster, a
       * deployment (status and sync status) or a release step (default true). Needs the signals
       * backend (`@backstage/plugin-signals-backend`); without it the UI polls every 60 s.
       */
      enabled?: boolean;
    };
    /** The providers a release's analysis may use: they are the platform's, not the caller's. */
    analysis?: {
      prometheus?: {
        /**
         * The Prometheus servers (base URLs such as `http://prometheus.monitoring.svc:9090`) a
         * strategy's `provider.prometheus.address` may name; any other address is a 400. Compared
         * exactly after normalisation (scheme and host case, default port, trailing `/`), so a
         * path below a listed address is another address. Empty or unset (the default): no
         * release with an analysis is accepted.
         */
        allowedAddresses?: string[];
      };
    };
    /** Releases across the fleet. */
    release?: {
      /**
       * Freeze windows: times when a release touching one of the clusters a window selects
       * waits (status WAITING_FOR_WINDOW) until the window closes, unless an approval overrides
       * the freeze. Default: none. A wrong window stops the backend at startup, naming it.
       */
      freezeWindows?: Array<{
        /** Unique among the windows; shown on the releases that wait for it. */
        name: string;
        /**
         * The clusters it freezes, as `kubectl -l` takes a selector (`env=prod`,
         * `env in (prod,dr)`); absent: every cluster.
         */
        clusterSelector?: string;
        /**
         * When it opens: a 5-field cron expression (minute hour day-of-month month day-of-week),
         * read in `timeZone`, e.g. `0 18 * * 5` for Fridays at 18:00. Give cron or start.
         */
        cron?: string;
        /**
         * Or when it opens, once: an ISO 8601 instant with its offset, quoted
         * (`'2026-12-24T18:00:00+01:00'`).
         */
        start?: string;
        /**
         * How long it stays open after each opening: a number and a unit among s, m, h and d
         * (`30m`, `64h`, `3d`). Elapsed time: across a change of summer time, the window closes
         * an hour earlier or later on the clock.
         */
        duration: string;
        /** The IANA time zone the cron expression is read in (default `UTC`). */
        timeZone?: string;
      }>;
    };
    /** Backstage notifications about failures, rollbacks, prunes and outages. */
    notifications?: {
      /**
       * Whether Fleet sends notifications (default true). Needs the notifications backend
       * (`@backstage/plugin-notifications-backend`).
       */
      enabled?: boolean;
      /**
       * Who hears about a cluster going OFFLINE and about a mass outage: entity refs, a ref
       * without a kind being a group (default: `fleet.permissions.clusterAdmins`).
       */
      clusterAdmins?: string[];
    };
    database?: {
      /**
       * Whether the entity card's read uses a named prepared statement on PostgreSQL (default
       * true: parsed and planned once per connection, which more than halves its cost). Set it to
       * false behind a PgBouncer older than 1.21 in transaction mode, which cannot keep them.
       */
      preparedStatements?: boolean;
    };
  };
}
