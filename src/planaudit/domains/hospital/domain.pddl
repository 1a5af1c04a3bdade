;; Hospital: patients are placed in beds of wards that suit their condition.
;; A patient who needs isolation may only lie in an isolation bed.  A bed
;; is free, dirty, blocked or occupied; a bed a patient leaves is dirty and
;; must be cleaned before anyone else can use it.  Every action costs 1.

(define (domain hospital)
  (:requirements :strips :typing :negative-preconditions
                 :disjunctive-preconditions :action-costs)

  (:types patient bed ward)

  (:predicates
    (in-ward ?b - bed ?w - ward)          ; bed ?b belongs to ward ?w
    (suits ?w - ward ?p - patient)        ; ward ?w can treat patient ?p
    (needs-isolation ?p - patient)        ; patient ?p must be isolated
    (isolation-bed ?b - bed)              ; bed ?b is an isolation bed
    (recovered ?p - patient)              ; patient ?p may be discharged
    (waiting ?p - patient)                ; patient ?p waits for admission
    (in-bed ?p - patient ?b - bed)        ; patient ?p lies in bed ?b
    (admitted ?p - patient)               ; patient ?p lies in some bed
    (discharged ?p - patient)             ; patient ?p has gone home
    (free ?b - bed)                       ; bed ?b is clean and empty
    (dirty ?b - bed)                      ; bed ?b is empty and needs cleaning
    (blocked ?b - bed))                   ; bed ?b is out of service

  (:functions (total-cost) - number)

  ;; Admit a waiting patient to a free bed of a suitable ward.
  (:action admit
    :parameters (?p - patient ?b - bed ?w - ward)
    :precondition (and (waiting ?p)
                       (free ?b)
                       (in-ward ?b ?w)
                       (suits ?w ?p)
                       (imply (needs-isolation ?p) (isolation-bed ?b)))
    :effect (and (in-bed ?p ?b)
                 (admitted ?p)
                 (not (waiting ?p))
                 (not (free ?b))
                 (increase (total-cost) 1)))

  ;; Move a patient to a free bed of a suitable ward; the old bed is dirty.
  (:action transfer
    :parameters (?p - patient ?from - bed ?to - bed ?w - ward)
    :precondition (and (in-bed ?p ?from)
                       (free ?to)
                       (in-ward ?to ?w)
                       (suits ?w ?p)
                       (imply (needs-isolation ?p) (isolation-bed ?to)))
    :effect (and (in-bed ?p ?to)
                 (not (in-bed ?p ?from))
                 (not (free ?to))
                 (dirty ?from)
                 (increase (total-cost) 1)))

  ;; Send a recovered patient home; the bed is left dirty.
  (:action discharge
    :parameters (?p - patient ?b - bed)
    :precondition (and (in-bed ?p ?b)
                       (recovered ?p))
    :effect (and (discharged ?p)
                 (dirty ?b)
                 (not (in-bed ?p ?b))
                 (not (admitted ?p))
                 (increase (total-cost) 1)))

  (:action clean
    :parameters (?b - bed)
    :precondition (dirty ?b)
    :effect (and (free ?b)
                 (not (dirty ?b))
                 (increase (total-cost) 1)))

  ;; Take a free bed out of service.
  (:action block
    :parameters (?b - bed)
    :precondition (free ?b)
    :effect (and (blocked ?b)
                 (not (free ?b))
                 (increase (total-cost) 1)))

  ;; Return a blocked bed to service.
  (:action unblock
    :parameters (?b - bed)
    :precondition (blocked ?b)
    :effect (and (free ?b)
                 (not (blocked ?b))
                 (increase (total-cost) 1))))
