;; Load balancing: traffic buckets are assigned to servers.  A bucket may
;; only be served from one of its allowed regions, by a powered server
;; running the service the bucket needs, and only while the server has
;; spare capacity.  Every action costs 1.

(define (domain loadbalancing)
  (:requirements :strips :typing :negative-preconditions :numeric-fluents :action-costs)

  (:types server bucket region service)

  (:predicates
    (in-region ?s - server ?r - region)       ; server ?s is located in region ?r
    (allowed ?b - bucket ?r - region)         ; bucket ?b may be served from region ?r
    (needs ?b - bucket ?v - service)          ; bucket ?b needs service ?v
    (supports ?s - server ?v - service)       ; server ?s can run service ?v
    (powered ?s - server)                     ; server ?s is switched on
    (running ?v - service ?s - server)        ; service ?v runs on server ?s
    (assigned ?b - bucket ?s - server)        ; bucket ?b is served by server ?s
    (served ?b - bucket))                     ; bucket ?b is served by some server

  (:functions
    (load ?s - server)                        ; buckets assigned to ?s
    (capacity ?s - server)                    ; most buckets ?s may carry (static)
    (users ?v - service ?s - server)          ; buckets on ?s that use service ?v
    (services ?s - server)                    ; services running on ?s
    (total-cost) - number)

  ;; Switch a server on.
  (:action power-on
    :parameters (?s - server)
    :precondition (not (powered ?s))
    :effect (and (powered ?s)
                 (increase (total-cost) 1)))

  ;; Switch a server off: it must carry no bucket and run no service.
  (:action power-off
    :parameters (?s - server)
    :precondition (and (powered ?s)
                       (= (load ?s) 0)
                       (= (services ?s) 0))
    :effect (and (not (powered ?s))
                 (increase (total-cost) 1)))

  ;; Start a service the (powered) server supports.
  (:action start-service
    :parameters (?v - service ?s - server)
    :precondition (and (powered ?s)
                       (supports ?s ?v)
                       (not (running ?v ?s)))
    :effect (and (running ?v ?s)
                 (increase (services ?s) 1)
                 (increase (total-cost) 1)))

  ;; Stop a service that no bucket on this server uses.
  (:action stop-service
    :parameters (?v - service ?s - server)
    :precondition (and (running ?v ?s)
                       (= (users ?v ?s) 0))
    :effect (and (not (running ?v ?s))
                 (decrease (services ?s) 1)
                 (increase (total-cost) 1)))

  ;; Serve an unserved bucket from a server in an allowed region that runs
  ;; the bucket's service and has spare capacity.
  (:action assign-bucket
    :parameters (?b - bucket ?s - server ?r - region ?v - service)
    :precondition (and (not (served ?b))
                       (powered ?s)
                       (in-region ?s ?r)
                       (allowed ?b ?r)
                       (needs ?b ?v)
                       (running ?v ?s)
                       (< (load ?s) (capacity ?s)))
    :effect (and (assigned ?b ?s)
                 (served ?b)
                 (increase (load ?s) 1)
                 (increase (users ?v ?s) 1)
                 (increase (total-cost) 1)))

  ;; Take a bucket off its server; it is unserved until assigned again.
  (:action unassign-bucket
    :parameters (?b - bucket ?s - server ?v - service)
    :precondition (and (assigned ?b ?s)
                       (needs ?b ?v))
    :effect (and (not (assigned ?b ?s))
                 (not (served ?b))
                 (decrease (load ?s) 1)
                 (decrease (users ?v ?s) 1)
                 (increase (total-cost) 1))))
