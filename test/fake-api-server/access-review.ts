import type { KubeObject } from '../../src/api/meta.js';
import {
  type SubjectAccessReview,
  SubjectAccessReviewKind,
} from '../../src/api/subject-access-review.js';
import { builtinKind, type ServedKind } from './kinds.js';
import { invalidFields } from './status.js';

/**
 * authorization.k8s.io/v1 SubjectAccessReviews: create only, answered from the server's RBAC
 * (allowed without RBAC, as an AlwaysAllow authorizer would) and never stored. The spec's uid
 * and extra are carried but, as in RBAC, decide nothing.
 */
export const subjectAccessReviewKind: ServedKind = builtinKind(SubjectAccessReviewKind, {
  createOnly: true,
  strategy: {
    async create(object, context) {
      const review = object as SubjectAccessReview;
      const attributes = review.spec?.resourceAttributes;
      const user = review.spec?.user ?? '';
      const groups = review.spec?.groups ?? [];
      if (!attributes || (user === '' && groups.length === 0)) {
        // The API server's validation of a review without a subject or a request.
        throw invalidFields(SubjectAccessReviewKind, '', [
          ...(attributes
            ? []
            : [
                'spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified',
              ]),
          ...(user === '' && groups.length === 0
            ? ['spec.user: Invalid value: "": at least one of user or group must be specified']
            : []),
        ]);
      }
      const decision = context.authorize({
        user: { username: user, groups },
        verb: attributes.verb,
        apiGroup: attributes.group,
        resource: attributes.resource,
        subresource: attributes.subresource || undefined,
        namespace: attributes.namespace || undefined,
        name: attributes.name || undefined,
      });
      return {
        ...review,
        status: { allowed: decision.allowed, ...(decision.reason && { reason: decision.reason }) },
      } as KubeObject;
    },
    update() {
      /* c8 ignore next */
      throw new Error('SubjectAccessReviews are never updated');
    },
  },
});
