package lua

// workloadRIC is the ResourceInterpreterCustomization of the Workload kind
// (workload.example.io/v1alpha1), in the style of Karmada's samples.
const workloadRIC = `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: workload
  generation: 1
spec:
  target:
    apiVersion: workload.example.io/v1alpha1
    kind: Workload
  customizations:
    replicaResource:
      luaScript: |
        local kube = require("kube")
        function GetReplicas(obj)
          local replica = obj.spec.replicas
          local requirement = kube.accuratePodRequirements(obj.spec.template)
          return replica, requirement
        end
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, desiredReplica)
          obj.spec.replicas = desiredReplica
          return obj
        end
    retention:
      luaScript: |
        function Retain(desiredObj, observedObj)
          desiredObj.spec.paused = observedObj.spec.paused
          return desiredObj
        end
    statusReflection:
      luaScript: |
        function ReflectStatus(observedObj)
          if observedObj.status == nil then
            return nil
          end
          return {readyReplicas = observedObj.status.readyReplicas, conditions = observedObj.status.conditions}
        end
    statusAggregation:
      luaScript: |
        function AggregateStatus(desiredObj, statusItems)
          if statusItems == nil then
            return desiredObj
          end
          if desiredObj.status == nil then
            desiredObj.status = {}
          end
          local ready = 0
          for i = 1, #statusItems do
            if statusItems[i].status ~= nil and statusItems[i].status.readyReplicas ~= nil then
              ready = ready + statusItems[i].status.readyReplicas
            end
          end
          desiredObj.status.readyReplicas = ready
          return desiredObj
        end
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          return observedObj.status ~= nil and observedObj.status.readyReplicas == observedObj.spec.replicas
        end
    dependencyInterpretation:
      luaScript: |
        local kube = require("kube")
        function GetDependencies(desiredObj)
          return kube.getPodDependencies(desiredObj.spec.template, desiredObj.metadata.namespace)
        end
`

// workload is a Workload object (replicas 3).
const workload = `
apiVersion: workload.example.io/v1alpha1
kind: Workload
metadata:
  name: nginx
  namespace: default
  labels: {}
spec:
  replicas: 3
  paused: false
  template:
    metadata:
      labels: {app: nginx}
    spec:
      serviceAccountName: web
      containers:
      - name: nginx
        image: nginx
        resources:
          requests: {cpu: 100m, memory: 128Mi}
        envFrom:
        - configMapRef: {name: web-config}
      volumes:
      - name: creds
        secret: {secretName: web-secret}
`

// listsRIC indexes lists by computed keys in every operation, for the
// differential test of projected against whole conversion.
const listsRIC = `
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: lists
  generation: 1
spec:
  target:
    apiVersion: workload.example.io/v1alpha1
    kind: Workload
  customizations:
    replicaResource:
      luaScript: |
        local kube = require("kube")
        function GetReplicas(obj)
          local n = obj.spec.replicas
          for i = 1, #obj.spec.template.spec.containers do
            if obj.spec.template.spec.containers[i].name == "sidecar" then n = n + 1 end
          end
          return n, kube.accuratePodRequirements(obj.spec.template)
        end
    replicaRevision:
      luaScript: |
        function ReviseReplica(obj, r)
          obj.spec.replicas = r
          obj.spec.template.spec.containers[1].image = "img-" .. r
          return obj
        end
    retention:
      luaScript: |
        function Retain(desiredObj, observedObj)
          for i = 1, #observedObj.status.conditions do
            desiredObj.metadata.labels["c" .. i] = observedObj.status.conditions[i].type
          end
          return desiredObj
        end
    statusReflection:
      luaScript: |
        function ReflectStatus(observedObj)
          local out = {conditions = {}, first = observedObj.status.conditions[1], n = #observedObj.status.conditions}
          for i = 1, #observedObj.status.conditions do
            out.conditions[i] = {type = observedObj.status.conditions[i].type, missing = observedObj.status.conditions[i].nothing}
          end
          out.third = observedObj.status.conditions[3]
          return out
        end
    statusAggregation:
      luaScript: |
        function AggregateStatus(desiredObj, statusItems)
          if desiredObj.status == nil then desiredObj.status = {} end
          local ready, names = 0, ""
          for i = 1, #statusItems do
            names = names .. statusItems[i].clusterName
            if statusItems[i].status ~= nil and statusItems[i].status.readyReplicas ~= nil then
              ready = ready + statusItems[i].status.readyReplicas
            end
          end
          desiredObj.status.readyReplicas = ready
          desiredObj.status.clusters = names
          return desiredObj
        end
    healthInterpretation:
      luaScript: |
        function InterpretHealth(observedObj)
          local conds = observedObj.status.conditions
          for i = 1, #observedObj.status.conditions do
            if observedObj.status.conditions[i].type == "Available" then
              return observedObj.status.conditions[i].status == "True" and #conds > 0
            end
          end
          return false
        end
    dependencyInterpretation:
      luaScript: |
        function GetDependencies(desiredObj)
          local deps = {}
          for i = 1, #desiredObj.spec.template.spec.volumes do
            local v = desiredObj.spec.template.spec.volumes[i]
            if v.secret ~= nil then
              deps[#deps + 1] = {apiVersion = "v1", kind = "Secret", namespace = desiredObj.metadata.namespace, name = v.secret.secretName}
            end
          end
          return deps
        end
`
