; A domain that exercises every feature the validator supports, written the way
; real tools write PDDL: mixed case, comments, flags, empty sections.
(define (domain Mixed)
  (:requirements :strips :typing :negative-preconditions :disjunctive-preconditions
                 :equality :numeric-fluents :action-costs)
  (:types room item - object robot)
  (:constants)
  (:predicates (At ?r - robot ?x - room) (Holding ?r - robot ?i - item)
               (In ?i - item ?x - room) (Door ?a ?b - room) (Locked ?x - room)
               (Lit ?x - room) (Free ?r - robot))
  (:functions (Battery ?r - robot) (Carried ?r - robot) (total-cost) - number)

  (:action Move
    :parameters (?r - robot ?from ?to - room)
    :precondition (and (At ?r ?from) (Door ?from ?to) (not (= ?from ?to))
                       (not (Locked ?to)) (>= (Battery ?r) 1))
    :effect (and (not (At ?r ?from)) (At ?r ?to) (decrease (Battery ?r) 1)
                 (increase (total-cost) 2)))

  (:action Pick
    :parameters (?r - robot ?i - item ?x - room)
    :precondition (and (At ?r ?x) (In ?i ?x) (Free ?r)
                       (or (Lit ?x) (< (Carried ?r) 1)))
    :effect (and (Holding ?r ?i) (not (In ?i ?x)) (not (Free ?r))
                 (increase (Carried ?r) 1) (increase (total-cost) 1)))

  (:action Drop
    :parameters (?r - robot ?i - item ?x - room)
    :precondition (and (At ?r ?x) (Holding ?r ?i))
    :effect (and (In ?i ?x) (not (Holding ?r ?i)) (Free ?r) (increase (total-cost) 1)))

  (:action Switch
    :parameters (?r - robot ?x - room)
    :precondition (and (At ?r ?x) (not (Lit ?x)))
    :effect (and (Lit ?x) (increase (total-cost) 1))))
